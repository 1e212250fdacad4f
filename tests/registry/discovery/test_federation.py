"""Federation (ARD v0.91 §5.4) against real registries on loopback: `auto` merges upstream results
with ours, each keeping its source; `referrals` names the upstreams; `none` asks nobody. An
upstream that hangs, fails or answers nonsense costs at most the deadline and is reported; two
registries that name each other answer without looping."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from registry.app import create_app
from registry.container import build_services
from tests.registry.discovery.ard_agents import agent_card, names, register, search
from tests.registry.discovery.ard_servers import (
    ServedApp,
    StubRegistry,
    StubReply,
    agentdex_settings,
    migrated_sqlite,
    served_agentdex,
    stub_result,
)

URN = re.compile(r"^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$")
OURS = "http://localhost/ard"
FAILED, LOCAL_ONLY = "ARD-Federation-Failed", "ARD-Federation-Local-Only"


@pytest.fixture
def stubs() -> Iterator[Any]:
    made: list[StubRegistry] = []

    def make(reply: StubReply | None = None) -> StubRegistry:
        made.append(StubRegistry(reply))
        return made[-1]

    yield make
    for stub in made:
        stub.close()


@pytest.fixture
def federated(settings, services) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """Our registry, on the test database, with these upstreams: its test client."""
    built = []

    def build(*upstreams: str, timeout: float = 2.0):  # type: ignore[no-untyped-def]
        built.append(build_services(agentdex_settings(settings, settings.database_url, upstreams, timeout)))
        return create_app(services=built[-1]).test_client()

    yield build
    for other in built:
        other.close()


@pytest.fixture
def served() -> Iterator[Any]:
    made: list[ServedApp] = []

    def make() -> ServedApp:
        made.append(ServedApp())
        return made[-1]

    yield make
    for app in made:
        app.close()


@pytest.fixture
def upstream_agentdex(settings, served, tmp_path) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """Another Agentdex on a database of its own, served over HTTP: (its ARD base URL, its test
    client, a write token)."""
    server = served()
    services = served_agentdex(server, agentdex_settings(settings, migrated_sqlite(tmp_path / "upstream.db")))
    token = services.tokens.create("carol", ["agents:write"]).token
    yield f"{server.url}/ard", server.app.test_client(), {"Authorization": f"Bearer {token}"}
    services.close()


def test_auto_merges_upstream_results_with_ours_each_with_its_source(
    client, auth, federated, upstream_agentdex
) -> None:  # type: ignore[no-untyped-def]
    upstream, upstream_client, upstream_auth = upstream_agentdex
    register(
        client,
        auth,
        agent_card("Currency Converter", "Converts euros to yen", "Currency conversion", ["fx"]),
        "https://fx.ours.example/c.json",
    )
    register(
        upstream_client,
        upstream_auth,
        agent_card("Yen Exchange Desk", "Exchanges euros and yen", "Currency exchange", ["fx"]),
        "https://desk.up.example/c.json",
    )
    register(
        upstream_client,
        upstream_auth,
        agent_card("Tide Tables", "High and low water", "Tides", ["sea"]),
        "https://tides.up.example/c.json",
    )
    response = federated(upstream).post("/ard/search", json={"query": {"text": "currency exchange euros yen"}})
    assert response.status_code == 200 and FAILED not in response.headers
    results = response.json["results"]
    assert {r["displayName"]: r["source"] for r in results} == {
        "Currency Converter": OURS,
        "Yen Exchange Desk": upstream,
    }
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert all(URN.match(r["identifier"]) for r in results)


def test_a_duplicate_is_shown_once_best_score_first_ours_on_a_tie(client, auth, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    register(
        client,
        auth,
        agent_card("Currency Converter", "Converts euros to yen", "Currency conversion", ["fx"]),
        "https://fx.ours.example/c.json",
    )
    ours = search(client, {"query": {"text": "currency"}, "federation": "none"})["results"][0]
    stub = stubs()
    searching = federated(stub.url)
    for score, source in ((ours["score"], OURS), (min(100, ours["score"] + 1), "https://elsewhere.example/ard")):
        stub.reply = StubReply(
            body={
                "results": [
                    stub_result(ours["identifier"], "Converter (copy)", score),
                    stub_result("urn:air:other.example:a2a:x", "Other", 1),
                ]
            }
        )
        results = search(searching, {"query": {"text": "currency"}})["results"]
        assert [r["identifier"] for r in results] == [ours["identifier"], "urn:air:other.example:a2a:x"]
        assert results[0]["source"] == source


def test_referrals_name_the_upstreams_and_ask_none_of_them(client, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    first, second = stubs(), stubs()
    body = search(federated(first.url, second.url), {"query": {"text": "anything"}, "federation": "referrals"})
    assert [referral["url"] for referral in body["referrals"]] == [f"{first.url}/search", f"{second.url}/search"]
    for referral in body["referrals"]:
        assert set(referral) == {"identifier", "displayName", "type", "url"}
        assert URN.match(referral["identifier"]) and referral["type"] == "application/ai-registry+json"
    assert body["referrals"][0]["identifier"] != body["referrals"][1]["identifier"]
    assert first.requests == second.requests == []


def test_none_searches_only_our_index(client, auth, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    register(
        client,
        auth,
        agent_card("Currency Converter", "Converts euros to yen", "Currency conversion", ["fx"]),
        "https://fx.ours.example/c.json",
    )
    stub = stubs(StubReply(body={"results": [stub_result("urn:air:other.example:a2a:x", "Other", 99)]}))
    body = search(federated(stub.url), {"query": {"text": "currency"}, "federation": "none"})
    assert names(body) == ["Currency Converter"] and "referrals" not in body
    assert stub.requests == []


def test_slow_failing_and_nonsense_upstreams_cost_the_deadline_and_are_reported(client, auth, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    register(
        client,
        auth,
        agent_card("Currency Converter", "Converts euros to yen", "Currency conversion", ["fx"]),
        "https://fx.ours.example/c.json",
    )
    hanging, failing, nonsense = (
        stubs(StubReply(hang=True)),
        stubs(StubReply(status=500)),
        stubs(StubReply(body={"items": []})),
    )
    good = stubs(StubReply(body={"results": [stub_result("urn:air:good.example:a2a:fx", "Good FX", 40)]}))
    closed = StubRegistry()
    closed.close()  # nothing listens there any more
    searching = federated(hanging.url, failing.url, good.url, nonsense.url, closed.url, timeout=0.5)
    started = time.monotonic()
    response = searching.post("/ard/search", json={"query": {"text": "currency"}})
    elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert 0.5 <= elapsed < 1.5
    assert set(names(response.json)) == {"Currency Converter", "Good FX"}
    failed = response.headers[FAILED]
    assert f'"{hanging.url}";reason="no answer within 0.5 s"' in failed
    assert f'"{failing.url}";reason="HTTP 500"' in failed
    assert f'"{nonsense.url}";reason="the answer is not an ARD search response (no results array)"' in failed
    assert f'"{closed.url}";reason=' in failed and good.url not in failed


def test_upstream_calls_carry_the_hop_count_request_id_and_budget(client, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    stub = stubs()
    searching = federated(stub.url)
    query = {"text": "fx", "filter": {"tags": ["fx"]}, "@context": {"a": "https://agenticresourcediscovery.org/ns#"}}
    search(searching, {"query": query, "pageSize": 7})
    search(
        searching,
        {"query": query},
        **{"ARD-Federation-Hops": "1", "ARD-Federation-Request-Id": "abc-1", "ARD-Federation-Budget-Ms": "1000"},
    )
    (first_headers, first_body), (second_headers, _) = stub.requests
    assert first_body == {"query": query, "federation": "auto", "pageSize": 7}
    assert first_headers["ARD-Federation-Hops"] == "1" and first_headers["ARD-Federation-Request-Id"]
    assert 0 < int(first_headers["ARD-Federation-Budget-Ms"]) <= 2000
    assert second_headers["ARD-Federation-Hops"] == "2" and second_headers["ARD-Federation-Request-Id"] == "abc-1"
    assert int(second_headers["ARD-Federation-Budget-Ms"]) <= 750


def test_at_the_hop_limit_or_a_repeated_request_the_search_stays_local(client, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    stub = stubs()
    searching = federated(stub.url)
    at_limit = searching.post("/ard/search", json={"query": {"text": "x"}}, headers={"ARD-Federation-Hops": "3"})
    assert at_limit.status_code == 200 and at_limit.headers[LOCAL_ONLY] == "max-hops"
    assert stub.requests == []
    for expected in (None, "repeated-request"):
        response = searching.post(
            "/ard/search", json={"query": {"text": "x"}}, headers={"ARD-Federation-Request-Id": "r-7"}
        )
        assert response.headers.get(LOCAL_ONLY) == expected
    assert len(stub.requests) == 1


def test_two_registries_naming_each_other_answer_without_looping(client, auth, settings, served, tmp_path) -> None:  # type: ignore[no-untyped-def]
    first, second = served(), served()
    a = served_agentdex(first, agentdex_settings(settings, settings.database_url, (f"{second.url}/ard",)))
    b = served_agentdex(second, agentdex_settings(settings, migrated_sqlite(tmp_path / "b.db"), (f"{first.url}/ard",)))
    try:
        b_auth = {"Authorization": f"Bearer {b.tokens.create('dave', ['agents:write']).token}"}
        register(
            client,
            auth,
            agent_card("Alpine Weather", "Weather in the Alps", "Forecasts", ["weather"]),
            "https://a.example/c.json",
        )
        register(
            second.app.test_client(),
            b_auth,
            agent_card("Coastal Weather", "Weather on the coast", "Forecasts", ["weather"]),
            "https://b.example/c.json",
        )
        started = time.monotonic()
        response = first.app.test_client().post("/ard/search", json={"query": {"text": "weather"}})
        assert time.monotonic() - started < 1.0  # no deadline waited for
        assert response.status_code == 200 and FAILED not in response.headers
        sources = {r["displayName"]: r["source"] for r in response.json["results"]}
        assert sources == {"Alpine Weather": "http://localhost/ard", "Coastal Weather": f"{second.url}/ard"}
    finally:
        a.close()
        b.close()


def _paged(results: list[dict[str, Any]]) -> Any:
    def reply(body: dict[str, Any]) -> StubReply:
        start, size = int(body.get("pageToken") or 0), body["pageSize"]
        page: dict[str, Any] = {"results": results[start : start + size]}
        if start + size < len(results):
            page["pageToken"] = str(start + size)
        return StubReply(body=page)

    return reply


def test_pages_of_a_federated_search_show_every_result_once_best_first(client, auth, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    for n in range(5):
        register(
            client,
            auth,
            agent_card(f"Ledger Helper {n}", "Keeps ledgers" + " and books" * n, "Ledgers", ["ledger"]),
            f"https://l{n}.example/c.json",
        )
    upstream = [
        stub_result(f"urn:air:up{n}.example:a2a:ledger", f"Upstream Ledger {n}", score)
        for n, score in enumerate((97, 80, 61, 44, 30, 12, 3))
    ]
    stub = stubs()
    stub.reply_for = _paged(upstream)
    searching = federated(stub.url)
    shown, token, pages = [], None, 0
    while True:
        body = search(
            searching, {"query": {"text": "ledger"}, "pageSize": 3, **({"pageToken": token} if token else {})}
        )
        assert len(body["results"]) <= 3
        shown += body["results"]
        pages += 1
        token = body.get("pageToken")
        if not token:
            break
    identifiers = [result["identifier"] for result in shown]
    assert len(identifiers) == len(set(identifiers)) == 12
    scores = [result["score"] for result in shown]
    assert scores == sorted(scores, reverse=True)
    assert pages <= 6
    assert {body.get("pageToken") for _, body in stub.requests} > {None, "3"}


def test_results_an_ard_client_would_refuse_are_left_out(client, federated, stubs) -> None:  # type: ignore[no-untyped-def]
    good = stub_result("urn:air:good.example:a2a:fx", "Good FX", 40, tags=["fx"], trustManifest={"identity": 5})
    bad = [
        stub_result("not-a-urn", "Bad URN", 50),
        stub_result("urn:air:bad.example:a2a:score", "Bad score", 150),
        stub_result("urn:air:bad.example:a2a:float", "Half score", 40.5),
        {**stub_result("urn:air:bad.example:a2a:both", "Both", 50), "data": {"name": "x"}},
        {
            key: value
            for key, value in stub_result("urn:air:bad.example:a2a:none", "Neither", 50).items()
            if key != "url"
        },
        {**stub_result("urn:air:bad.example:a2a:type", "No type", 50), "type": " "},
        "a string",
    ]
    stub = stubs(StubReply(body={"results": [*bad, {**good, "source": None}], "pageToken": None}))
    (result,) = search(federated(stub.url), {"query": {"text": "fx"}})["results"]
    assert result == {key: value for key, value in {**good, "source": stub.url}.items() if key != "trustManifest"}
