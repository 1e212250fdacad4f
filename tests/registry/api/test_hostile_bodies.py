"""Every endpoint that reads a JSON body, found in the app's URL map (so a new one is covered the
day it is added), answers each kind of hostile body with a 4xx in the error envelope and stores
nothing: no row is added to any table. Each protocol answers in its own envelope
(`tests.support.envelopes`): the REST API's carries our code and the JSONPath, ARD's and A2A's a
message naming it. The relay ingress, answered in front of Flask, is added
by hand."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sqlalchemy import func, select

from registry.db import Base
from tests.support.cards import make_card
from tests.support.envelopes import is_client_error, refusal_of

# POST endpoints that read no body (they act on the resource in their path). Anything else that
# takes POST, PUT or PATCH is treated as reading JSON: a new endpoint is covered by default.
BODYLESS = {
    "agents.refresh",
    "agent_ownership.approve",
    "agent_ownership.claim",
    "health.check_now",
    "relay.rotate_token",
    "relay.replay_message",
    "events.replay_message",
}
# The A2A bindings' answers for a URL or method that names no operation (JSON-RPC: invalid request,
# method not found; HTTP+JSON: google.rpc statuses).
NO_OPERATION = {"-32600", "-32601", "NOT_FOUND", "METHOD_NOT_ALLOWED", "UNIMPLEMENTED"}
DEEP = b"[" * 1_025 + b"]" * 1_025


@dataclasses.dataclass(frozen=True)
class Hostile:
    name: str
    body: bytes
    code: str | None = None  # the error code every endpoint answers; None: any 4xx in the envelope
    path: str | None = None  # details.path, where the reader says it is
    content_type: str = "application/json"
    judged_as_card: bool = False  # valid JSON that `POST /v1/validate` reports on (200) instead


CASES = [
    Hostile("1,025 nested arrays", DEEP, "json_too_deep", "$"),
    Hostile("500 levels, no two brackets together", b"[1, " * 500 + b"1" + b"]" * 500, "json_too_deep", "$"),
    Hostile("65 levels inside an object", b'{"card": ' + b"[" * 64 + b"]" * 64 + b"}", "json_too_deep", "$"),
    Hostile(
        "deep and a big integer (read by json)",
        b"[" * 2_000 + b"12345678901234567890123" + b"]" * 2_000,
        "json_too_deep",
        "$",
    ),  # fmt: skip
    Hostile("lone surrogate in a value", b'{"name": "\\ud800", "skills": []}', "invalid_unicode", "$.name"),
    Hostile("lone surrogate in a key", b'{"card": {"\\udc00": 1}}', "invalid_unicode", '$.card["\\udc00"]'),
    Hostile("lone surrogate as raw bytes", b'{"status": "\xed\xa0\x80"}', "invalid_unicode", "$.status"),
    Hostile("duplicate member names", b'{"status": "active", "status": "deprecated"}', "duplicate_member", "$.status"),
    Hostile(
        "duplicate names, nested",
        b'{"items": [{"card": {"name": "a", "name": "b"}}]}',
        "duplicate_member",
        "$.items[0].card.name",
    ),  # fmt: skip
    Hostile("truncated JSON", b'{"url": ', "invalid_json", "$"),
    Hostile("NaN", b'{"a": NaN}', "invalid_json", "$"),
    Hostile("a number beyond double range", b'{"a": 1e400}', "invalid_json", "$"),
    Hostile("an integer of 5,000 digits", b'{"a": ' + b"7" * 5_000 + b"}", "invalid_json", "$"),
    Hostile("NUL in a value", b'{"name": "a\\u0000b", "skills": []}', "nul_character", "$.name"),
    Hostile("NUL in a member name", b'{"card": {"a\\u0000": 1}}', "nul_character", '$.card["a\\u0000"]'),
    Hostile("two documents", b"{} {}", "invalid_json", "$"),
    Hostile("not UTF-8", b'{"a": "\xff"}', "invalid_json", "$"),
    Hostile("empty body", b""),
    Hostile("an array, not an object", b"[]", judged_as_card=True),
    Hostile("a string, not an object", b'"card"', judged_as_card=True),
    Hostile("null", b"null", judged_as_card=True),
    Hostile("deep body sent as text/plain", DEEP, "json_too_deep", "$", content_type="text/plain"),
    Hostile("duplicates sent as a form", b'{"a": 1, "a": 2}', content_type="application/x-www-form-urlencoded"),
]


@pytest.fixture
def world(client: Any, admin_token: str) -> dict[str, str]:
    """An agent and a relay subscription, so that endpoints under them reach the body."""
    headers = {"Authorization": f"Bearer {admin_token}"}
    card = make_card("Target", url="https://target.example/a2a", push=True)
    agent = client.post(
        "/v1/agents", json={"card": card, "cardUrl": "https://target.example/card.json"}, headers=headers
    )
    assert agent.status_code == 201, agent.json
    subscription = client.post(
        "/v1/relay/subscriptions",
        json={"agentId": agent.json["id"], "targetUrl": "http://127.0.0.1:9/hook"},
        headers=headers,
    )
    assert subscription.status_code == 201, subscription.json
    return {
        "agent_id": agent.json["id"],
        "sub_id": subscription.json["id"],
        "relay_token": subscription.json["relayToken"],
    }


def json_endpoints(app: Any, world: dict[str, str]) -> list[tuple[str, str, str]]:
    """(endpoint, method, URL) of every route that takes a body, and the relay ingress."""
    found = []
    for rule in app.url_map.iter_rules():
        methods = sorted(rule.methods & {"POST", "PUT", "PATCH"})
        if not methods or rule.endpoint in BODYLESS:
            continue
        values = {name: world.get(name, "x") for name in rule.arguments}
        found += [(rule.endpoint, method, rule.build(values)[1]) for method in methods]
    return [*found, ("relay ingress", "POST", f"/relay/{world['sub_id']}")]


def row_counts(services: Any) -> dict[str, int]:
    with services.engine.connect() as conn:
        return {
            table.name: conn.scalar(select(func.count()).select_from(table)) for table in Base.metadata.sorted_tables
        }


def test_the_url_map_holds_the_endpoints_that_read_json(app: Any, world: dict[str, str]) -> None:
    endpoints = {endpoint for endpoint, _, _ in json_endpoints(app, world)}
    assert {"agents.register", "agents.import_cards", "agents.replace_card", "agents.update_status"} <= endpoints
    assert {"catalog.validate", "trust.register_keys", "relay.create_subscription", "relay ingress"} <= endpoints


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_json_endpoint_refuses_the_body_and_stores_nothing(
    app: Any, client: Any, services: Any, admin_token: str, world: dict[str, str], case: Hostile
) -> None:
    before = row_counts(services)
    problems = []
    for endpoint, method, url in json_endpoints(app, world):
        token = world["relay_token"] if endpoint == "relay ingress" else admin_token
        headers = {"Authorization": f"Bearer {token}", "Content-Type": case.content_type}
        response = client.open(url, method=method, data=case.body, headers=headers)
        if case.judged_as_card and endpoint == "catalog.validate":
            if response.status_code != 200 or response.json["valid"]:
                problems.append(f"{endpoint}: {response.status_code} {response.get_data()[:200]!r}")
            continue
        problems += [f"{method} {endpoint}: {problem}" for problem in refusal_problems(response, case, endpoint)]
        if row_counts(services) != before:
            problems.append(f"{method} {endpoint}: stored rows {row_counts(services)} (before: {before})")
    assert not problems, "\n".join(problems)


def refusal_problems(response: Any, case: Hostile, endpoint: str) -> list[str]:
    refusal = refusal_of(response)
    if refusal is None or not refusal.message:
        return [f"no error envelope ({response.status_code}): {response.get_data()[:300]!r}"]
    if not is_client_error(response, refusal):
        return [f"answered {response.status_code}: {response.get_data()[:300]!r}"]
    relay_refused_type = endpoint == "relay ingress" and case.content_type != "application/json"
    if case.code is None or relay_refused_type:  # the relay takes JSON only, and says so first (415)
        return []
    if refusal.protocol in ("jsonrpc", "a2a-rest") and refusal.code in NO_OPERATION:
        return []  # A2A: no operation at this URL or with this method, so no body is read
    if refusal.protocol != "rest":  # ARD's and A2A's envelopes carry no code of ours, nor a path
        return [] if case.path == "$" or case.path in refusal.message else [f"the message does not name {case.path}"]
    if refusal.code != case.code or refusal.details.get("path") != case.path:
        return [f"answered {refusal.code} at {refusal.details.get('path')}, not {case.code} at {case.path}"]
    if case.path != "$" and case.path not in refusal.message:
        return [f"the message does not name {case.path}: {refusal.message}"]
    return []
