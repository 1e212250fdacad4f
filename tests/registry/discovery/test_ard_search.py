"""`POST /ard/search` (ARD v0.91 §5.3.2): words find the agents that do it, best first, as ARD entries
with an integer score and their source; the filter narrows exactly; pages walk every result once;
everything it refuses is a 400 INVALID_ARGUMENT that says what to change."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from tests.registry.discovery.ard_agents import ARD_NS, agent_card, names, refusal, register, search, set_state
from tests.support.cards import make_card

URN = re.compile(r"^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$")
CARDS = {
    "Currency Converter": (
        "Converts amounts between euros, yen and dollars at today's rates",
        "Currency conversion",
        ["finance", "currency"],
        "https://fx.bank.example/.well-known/agent-card.json",
    ),
    "Invoice Reader": (
        "Reads scanned invoices and extracts totals",
        "Invoice scanning",
        ["finance"],
        "https://c1.example/c.json",
    ),
    "Weather Agent": (
        "Forecasts rain, wind and temperature for any city",
        "City forecasts",
        ["weather"],
        "https://c2.example/c.json",
    ),
    "Recipe Finder": (
        "Suggests dinner recipes from the fridge",
        "Dinner ideas",
        ["cooking"],
        "https://c3.example/c.json",
    ),
    "Zeppelin Tours": (
        "Books sightseeing flights over the Alps",
        "Sightseeing",
        ["travel"],
        "https://c4.example/c.json",
    ),
}


@pytest.fixture
def catalog(client, auth) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Agent ids by name."""
    ids = {}
    for name, (description, skill, tags, url) in CARDS.items():
        streaming = name == "Weather Agent"
        ids[name] = register(
            client, auth, agent_card(name, description, skill, tags, capabilities={"streaming": streaming}), url
        )
    return ids


def test_words_find_the_agents_that_do_it_best_first(client, catalog) -> None:  # type: ignore[no-untyped-def]
    body = search(client, {"query": {"text": "convert currency between euros and yen"}})
    assert names(body)[0] == "Currency Converter"
    scores = [result["score"] for result in body["results"]]
    assert all(isinstance(score, int) and 0 <= score <= 100 for score in scores)
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    first = body["results"][0]
    assert first["identifier"] == "urn:air:fx.bank.example:a2a:agent"
    assert first["type"] == "application/a2a-agent-card+json"
    assert first["url"] == f"http://localhost/v1/agents/{catalog['Currency Converter']}/card"
    assert first["source"] == "http://localhost/ard"
    assert "representativeQueries" not in first  # a projection (§5.3.2)
    assert all(URN.match(result["identifier"]) for result in body["results"])
    assert "pageToken" not in body and "referrals" not in body


def test_the_served_card_url_is_the_agents_card(client, catalog) -> None:  # type: ignore[no-untyped-def]
    first = search(client, {"query": {"text": "weather forecast"}})["results"][0]
    card = client.get(first["url"].removeprefix("http://localhost"))
    assert card.status_code == 200 and card.json["name"] == "Weather Agent"


def test_an_empty_text_lists_every_agent_in_registration_order(client, services, catalog) -> None:  # type: ignore[no-untyped-def]
    set_state(services, catalog["Weather Agent"], health="down")
    set_state(services, catalog["Zeppelin Tours"], health="up")
    body = search(client, {"query": {"text": ""}})
    assert names(body) == list(CARDS)
    assert {result["score"] for result in body["results"]} == {100}
    assert names(search(client, {"query": {"text": "  ", "filter": {"health": ["up", "down"]}}})) == [
        "Weather Agent",
        "Zeppelin Tours",
    ]


def test_a_down_agent_is_found_but_one_dead_for_days_is_not_listed(client, services, catalog) -> None:  # type: ignore[no-untyped-def]
    set_state(services, catalog["Weather Agent"], health="down", down_since=dt.timedelta(minutes=5))
    set_state(services, catalog["Recipe Finder"], health="down", down_since=dt.timedelta(days=30))
    found = names(search(client, {"query": {"text": "weather recipes"}}))
    assert "Weather Agent" in found and "Recipe Finder" not in found
    assert names(search(client, {"query": {"text": "", "filter": {"health": "down"}}})) == ["Weather Agent"]


def test_health_and_signature_break_ties_and_filter(client, auth, services) -> None:  # type: ignore[no-untyped-def]
    twins = {
        state: register(
            client,
            auth,
            agent_card("Twin Agent", "Twins", "Twinning", ["twin"]),
            f"https://{state}.twin.example/c.json",
        )
        for state in ("down", "up", "degraded")
    }
    for state, agent_id in twins.items():
        set_state(services, agent_id, health=state)
    set_state(services, twins["degraded"], signature="verified")
    results = search(client, {"query": {"text": "twin"}})["results"]
    assert [result["metadata"]["health"] for result in results] == ["up", "degraded", "down"]
    assert len({result["score"] for result in results}) == 1
    verified = search(client, {"query": {"text": "twin", "filter": {"signature": "verified"}}})["results"]
    assert [result["metadata"]["agentdexId"] for result in verified] == [twins["degraded"]]


@pytest.mark.parametrize(
    ("query_filter", "expected"),
    [
        ({"tags": "weather"}, {"Weather Agent"}),
        ({"tags": ["weather", "cooking"]}, {"Weather Agent", "Recipe Finder"}),
        ({"tags": ["FINANCE"], "publisher": "FX.bank.example"}, {"Currency Converter"}),
        ({"tags": "finance", "publisher": ["c1.example", "c2.example"]}, {"Invoice Reader"}),
        ({"capabilities": "streaming"}, {"Weather Agent"}),
        ({"capabilities": "WeatherTool"}, set()),  # an open vocabulary: another registry's token matches nothing here
        ({"inputModes": "TEXT/Plain", "outputModes": ["application/json"], "tags": "travel"}, {"Zeppelin Tours"}),
        ({"protocolVersion": "1.0", "tags": "cooking"}, {"Recipe Finder"}),
        ({"type": "application/mcp-server-card+json"}, set()),
        (
            {"type": ["application/mcp-server-card+json", "Application/A2A-Agent-Card+JSON; v=1"], "tags": "travel"},
            {"Zeppelin Tours"},
        ),
        ({"identifier": "urn:air:fx.bank.example:a2a:agent"}, {"Currency Converter"}),
        ({"identifier": ["urn:ai:FX.bank.example:a2a:agent", "urn:air:nowhere.example:a2a:x"]}, {"Currency Converter"}),
        ({"identifier": "urn:air:fx.bank.example:a2a:agent", "tags": "weather"}, set()),
        ({"identifier": ["not-a-urn", "urn:air:fx.bank.example:a2a:agent"]}, {"Currency Converter"}),
        ({"identifier": "not-a-urn"}, set()),
        ({"tags": []}, set()),  # no value at all: nothing satisfies it
        ({f"{ARD_NS}tags": "weather"}, {"Weather Agent"}),
    ],
)
def test_the_filter_narrows_exactly(client, catalog, query_filter: dict[str, Any], expected: set[str]) -> None:  # type: ignore[no-untyped-def]
    assert set(names(search(client, {"query": {"text": "", "filter": query_filter}}))) == expected


def test_filter_keys_resolve_through_the_query_context(client, catalog) -> None:  # type: ignore[no-untyped-def]
    query = {
        "@context": [
            "https://agenticresourcediscovery.org/context/v1",
            {"a": ARD_NS, "topic": {"@id": f"{ARD_NS}tags"}},
        ],
        "text": "",
        "filter": {"a:tags": ["weather", "travel"], "topic": "travel"},
    }
    assert names(search(client, {"query": query})) == ["Zeppelin Tours"]
    other = {
        "@context": {"okf": "https://openknowledgeformat.org/ns#"},
        "text": "x",
        "filter": {"okf:taxonomy": "us-gaap"},
    }
    message = refusal(client.post("/ard/search", json={"query": other}))
    assert "okf:taxonomy (https://openknowledgeformat.org/ns#taxonomy)" in message and "tags" in message


def test_words_and_filter_compose(client, catalog) -> None:  # type: ignore[no-untyped-def]
    body = search(
        client,
        {"query": {"text": "scanned invoices and currency", "filter": {"tags": "finance", "publisher": "c1.example"}}},
    )
    assert names(body) == ["Invoice Reader"]


def test_pages_walk_every_result_once(client, auth) -> None:  # type: ignore[no-untyped-def]
    for n in range(23):
        register(
            client,
            auth,
            agent_card(f"Paging Helper {n}", "Helps with paging", "Paging", ["paging"]),
            f"https://p{n}.example/c.json",
        )
    for text in ("", "paging helper"):
        seen, token, sizes = [], None, []
        while True:
            body = search(
                client,
                {
                    "query": {"text": text, "filter": {"tags": "paging"}},
                    "pageSize": 10,
                    **({"pageToken": token} if token else {}),
                },
            )
            sizes.append(len(body["results"]))
            seen += [result["identifier"] for result in body["results"]]
            token = body.get("pageToken")
            if not token:
                break
        assert sizes == [10, 10, 3], text
        assert len(seen) == len(set(seen)) == 23


def test_page_size_over_the_maximum_is_served_not_refused(client, catalog) -> None:  # type: ignore[no-untyped-def]
    body = search(client, {"query": {"text": ""}, "pageSize": 5_000})
    assert len(body["results"]) == 5
    assert len(search(client, {"query": {"text": ""}, "pageSize": 2})["results"]) == 2


def test_a_page_token_of_another_query_is_refused(client, catalog) -> None:  # type: ignore[no-untyped-def]
    token = search(client, {"query": {"text": ""}, "pageSize": 2})["pageToken"]
    assert len(search(client, {"query": {"text": ""}, "pageSize": 2, "pageToken": token})["results"]) == 2
    message = refusal(
        client.post("/ard/search", json={"query": {"text": "weather"}, "pageSize": 2, "pageToken": token})
    )
    assert "pageToken" in message and "start again" in message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"query": {"text": "x"}, "limit": 3}, "unknown member 'limit'"),
        ({"query": {"text": "x", "federation": "none"}}, "query has unknown member 'federation'"),
        ({"query": {"text": "x", "filter": {"color": "red"}}}, "'color' is not supported; filter on tags, publisher"),
        (
            {"query": {"text": "x", "filter": {"trustManifest.attestations.type": "SOC2"}}},
            "trustManifest.attestations.type",
        ),
        ({"query": {"text": "x", "filter": {"zz:tags": "a"}}}, "'zz:tags' is not supported"),
        ({"query": {}}, "query.text is required"),
        ({"query": {"text": 5}}, "query.text must be a string"),
        ({"query": {"text": "x" * 3000}}, "query.text is over the limit"),
        ({"query": "weather"}, "query must be an object"),
        ({}, "query must be an object"),
        ({"query": {"text": "x"}, "federation": "everywhere"}, "federation must be one of auto, referrals, none"),
        ({"query": {"text": "x"}, "pageSize": 0}, "pageSize must be a whole number from 1"),
        ({"query": {"text": "x"}, "pageSize": "10"}, "pageSize must be a whole number"),
        ({"query": {"text": "x"}, "pageSize": True}, "pageSize must be a whole number"),
        ({"query": {"text": "x"}, "pageToken": 7}, "pageToken must be a string"),
        ({"query": {"text": "x"}, "pageToken": "not-a-token"}, "pageToken is not one this registry issued"),
        ({"query": {"text": "x"}, "pageToken": "eyJ2IjoxLCJxIjoiYSIsInAiOltbMCwiOTkuMC4wLiIsMF1dfQ"}, "pageToken"),
        ({"query": {"text": "x", "filter": {"health": "sick"}}}, "'sick'; the states are up, degraded, unknown, down"),
        ({"query": {"text": "x", "filter": {"signature": "trusted"}}}, "the states are verified"),
        (
            {"query": {"text": "x", "filter": {"tags": [1]}}},
            "query.filter.tags must be a string or an array of strings",
        ),
        ({"query": {"text": "x", "filter": {"tags": {"a": 1}}}}, "query.filter.tags must be"),
        ({"query": {"text": "x", "filter": {"tags": ["t"] * 40}}}, "at most 32"),
        ({"query": {"text": "x", "filter": ["tags"]}}, "query.filter must be an object"),
        ({"query": {"text": "x", "@context": 5}}, "query.@context must be"),
    ],
)
def test_refusals_say_what_to_change(client, catalog, body: dict[str, Any], says: str) -> None:  # type: ignore[no-untyped-def]
    assert says in refusal(client.post("/ard/search", json=body))


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"", b"[1, 2]", b'{"query": {"text": "a"}, "query": {"text": "b"}}', b'{"query": {"text": NaN}}'],
)
def test_a_body_that_is_not_a_json_object_is_refused(client, raw: bytes) -> None:  # type: ignore[no-untyped-def]
    refusal(client.post("/ard/search", data=raw, content_type="application/json"))


def test_a_malformed_federation_header_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/ard/search", json={"query": {"text": "x"}}, headers={"ARD-Federation-Hops": "many"})
    assert "ARD-Federation-Hops" in refusal(response)


def test_only_post_searches(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/ard/search")
    assert response.status_code == 405 and response.json["errorCode"] == "INVALID_ARGUMENT"


def test_an_agent_of_any_protocol_version_is_an_entry(client, auth) -> None:  # type: ignore[no-untyped-def]
    register(
        client, auth, make_card("Plain Agent", tags=["plain"]), "https://plain.example/.well-known/agent-card.json"
    )
    (result,) = search(client, {"query": {"text": "plain agent"}})["results"]
    assert result["identifier"] == "urn:air:plain.example:a2a:agent"
    assert result["tags"] == ["plain"] and result["description"]
