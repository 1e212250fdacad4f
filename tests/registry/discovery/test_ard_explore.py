"""`POST /ard/explore` (ARD v0.91 §5.3.3): facet counts over the agents a query matches, the same
matches as search; unknown fields and members are 400 INVALID_ARGUMENT."""

from __future__ import annotations

from typing import Any

import pytest

from tests.registry.discovery.ard_agents import agent_card, refusal, register, set_state

AGENTS = [
    # name, tags, card URL, streaming
    ("Weather Agent", ["weather", "forecast"], "https://wx.example/a.json", True),
    ("Storm Watch", ["weather", "alerts"], "https://wx.example/b.json", False),
    ("Tide Tables", ["sea", "forecast"], "https://sea.example/.well-known/agent-card.json", False),
    ("Invoice Reader", ["finance"], "https://[2001:db8::1]/card.json", False),
]


@pytest.fixture
def catalog(client, auth, services) -> dict[str, str]:  # type: ignore[no-untyped-def]
    ids = {}
    for name, tags, url, streaming in AGENTS:
        card = agent_card(name, f"{name} helps", name, tags, capabilities={"streaming": streaming})
        ids[name] = register(client, auth, card, url)
    set_state(services, ids["Storm Watch"], health="down")
    set_state(services, ids["Weather Agent"], health="up", signature="verified")
    return ids


def explore(client, body: dict[str, Any]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = client.post("/ard/explore", json=body)
    assert response.status_code == 200, response.json
    assert response.json["resultType"] == "facets"
    return dict(response.json["facets"])


def buckets(facet: dict[str, Any]) -> dict[str, int]:
    return {bucket["value"]: bucket["count"] for bucket in facet["buckets"]}


def test_facets_count_every_listed_agent(client, catalog) -> None:  # type: ignore[no-untyped-def]
    fields = [
        "type",
        "tags",
        "publisher",
        "inputModes",
        "outputModes",
        "capabilities",
        "protocolVersion",
        "health",
        "signature",
    ]
    facets = explore(client, {"resultType": {"facets": [{"field": field} for field in fields]}})
    assert list(facets) == fields
    assert buckets(facets["type"]) == {"application/a2a-agent-card+json": 4}
    assert buckets(facets["tags"]) == {"weather": 2, "forecast": 2, "alerts": 1, "sea": 1, "finance": 1}
    assert buckets(facets["publisher"]) == {"wx.example": 2, "sea.example": 1, "2001-db8--1": 1}
    assert buckets(facets["inputModes"]) == {"text/plain": 4}
    assert buckets(facets["capabilities"]) == {"streaming": 1}
    assert buckets(facets["health"]) == {"up": 1, "down": 1, "unknown": 2}
    assert buckets(facets["signature"])["verified"] == 1
    assert "1.0" in buckets(facets["protocolVersion"])
    counts = [bucket["count"] for bucket in facets["tags"]["buckets"]]
    assert counts == sorted(counts, reverse=True)


def test_a_publisher_bucket_is_a_filter_value_that_finds_its_agents(client, catalog) -> None:  # type: ignore[no-untyped-def]
    facets = explore(client, {"resultType": {"facets": [{"field": "publisher"}]}})
    for value, count in buckets(facets["publisher"]).items():
        body = client.post("/ard/search", json={"query": {"text": "", "filter": {"publisher": value}}}).json
        assert len(body["results"]) == count and all(r["identifier"].split(":")[2] == value for r in body["results"])


def test_facets_follow_the_query_text_and_filter(client, catalog) -> None:  # type: ignore[no-untyped-def]
    query = {"text": "weather", "filter": {"tags": "forecast"}}
    facets = explore(client, {"query": query, "resultType": {"facets": [{"field": "tags"}, {"field": "health"}]}})
    searched = client.post("/ard/search", json={"query": query}).json["results"]
    assert buckets(facets["health"]) == {r["metadata"]["health"]: 1 for r in searched}
    assert buckets(facets["tags"])["forecast"] == len(searched)
    down = explore(client, {"query": {"filter": {"health": "down"}}, "resultType": {"facets": [{"field": "tags"}]}})
    assert buckets(down["tags"]) == {"weather": 1, "alerts": 1}


def test_limit_and_min_count_trim_the_buckets_and_other_count_keeps_the_rest(client, catalog) -> None:  # type: ignore[no-untyped-def]
    facets = explore(
        client, {"resultType": {"facets": [{"field": "tags", "limit": 2}, {"field": "publisher", "minCount": 2}]}}
    )
    assert buckets(facets["tags"]) == {"forecast": 2, "weather": 2} and facets["tags"]["otherCount"] == 3
    assert buckets(facets["publisher"]) == {"wx.example": 2} and facets["publisher"]["otherCount"] == 2
    huge = explore(client, {"resultType": {"facets": [{"field": "tags", "limit": 10**9, "minCount": 10**12}]}})
    assert huge["tags"]["buckets"] == []


def test_a_filter_nothing_matches_counts_nothing(client, catalog) -> None:  # type: ignore[no-untyped-def]
    query = {"filter": {"type": "application/mcp-server-card+json"}}
    facets = explore(client, {"query": query, "resultType": {"facets": [{"field": "type"}, {"field": "tags"}]}})
    assert facets == {"type": {"buckets": []}, "tags": {"buckets": []}}


def test_a_facet_field_resolves_through_the_query_context(client, catalog) -> None:  # type: ignore[no-untyped-def]
    body = {
        "query": {"@context": {"a": "https://agenticresourcediscovery.org/ns#"}},
        "resultType": {"facets": [{"field": "a:tags"}]},
    }
    assert buckets(explore(client, body)["tags"])["weather"] == 2


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"resultType": {"facets": [{"field": "color"}]}}, "'color' is not a facet here; facets: type, tags"),
        ({"resultType": {"facets": [{"field": "identifier"}]}}, "is not a facet here"),
        ({"resultType": {"facets": []}}, "resultType.facets must be a non-empty array"),
        (
            {"resultType": {"facets": [{"field": "tags", "limit": 0}]}},
            "resultType.facets[0].limit must be a whole number from 1",
        ),
        ({"resultType": {"facets": [{"field": "tags", "minCount": -1}]}}, "minCount must be a whole number from 0"),
        ({"resultType": {"facets": [{"field": "tags", "size": 3}]}}, "unknown member 'size'"),
        ({"resultType": {"facets": [{}]}}, "resultType.facets[0].field is required"),
        ({"resultType": {"facets": ["tags"]}}, "resultType.facets[0] must be an object"),
        ({"resultType": {"counts": True}}, "resultType has unknown member 'counts'"),
        ({"resultType": "facets"}, "resultType is required"),
        ({}, "resultType is required"),
        ({"resultType": {"facets": [{"field": "tags"}]}, "federation": "auto"}, "unknown member 'federation'"),
        ({"query": {"text": 3}, "resultType": {"facets": [{"field": "tags"}]}}, "query.text must be a string"),
        (
            {"query": {"filter": {"nope": "x"}}, "resultType": {"facets": [{"field": "tags"}]}},
            "'nope' is not supported",
        ),
        (
            {"query": {"filter": {"identifier": "urn:air:a.example:x"}}, "resultType": {"facets": [{"field": "tags"}]}},
            "identifier",
        ),
        ({"resultType": {"facets": [{"field": "tags"}] * 21}}, "at most 20"),
    ],
)
def test_refusals_say_what_to_change(client, catalog, body: dict[str, Any], says: str) -> None:  # type: ignore[no-untyped-def]
    assert says in refusal(client.post("/ard/explore", json=body))


def test_a_body_that_is_not_json_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    refusal(client.post("/ard/explore", data=b"{", content_type="application/json"))
