"""The JSON-RPC health probe against real agents on loopback: the official a2a-sdk (1.x, and 0.3
through its compatibility mode) and plain servers that misbehave in every way issue 5 names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from registry.health.probe import HealthProbe, ProbeTarget, probe_targets
from tests.support.a2a_agents import (
    LOOPBACK_DEADLINE,
    TASK_NOT_FOUND,
    PlainAgent,
    SdkAgent,
    bearer_required,
    raw,
    rpc_error,
    slow,
)
from tests.support.cards import make_card

PROBE_METHODS = {"GetTask", "tasks/get"}


@pytest.fixture
def probe(services) -> HealthProbe:  # type: ignore[no-untyped-def]
    # Agents that answer get a deadline they cannot miss by accident; timeouts have their own test.
    return HealthProbe(services.http, timeout=LOOPBACK_DEADLINE, slow_after=LOOPBACK_DEADLINE)


@pytest.fixture
def sdk_agents() -> Iterator[list[SdkAgent]]:
    started: list[SdkAgent] = []
    yield started
    for agent in started:
        agent.stop()
        # Issue 5: no real agent ever receives a SendMessage/message/send from a probe.
        assert agent.messages == []
        assert {method for method, _ in agent.methods} <= PROBE_METHODS


def _sdk(sdk_agents: list[SdkAgent], **options: object) -> SdkAgent:
    agent = SdkAgent(**options)  # type: ignore[arg-type]
    sdk_agents.append(agent)
    return agent


def test_a_1x_sdk_agent_is_up_on_get_task_with_the_version_header(probe, sdk_agents):
    agent = _sdk(sdk_agents)
    result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    assert (result.outcome, result.reason, result.rpc_code, result.http_status) == ("up", "ok", -32001, 200)
    assert agent.methods == [("GetTask", "1.0")]
    assert result.latency_ms is not None and result.latency_ms >= 0


def test_a_0_3_sdk_agent_is_up_on_tasks_get_without_the_header(probe, sdk_agents):
    agent = _sdk(sdk_agents, compat=True, card="0.3")
    result = probe.probe(ProbeTarget(agent.rpc_url, "0.3.0"))
    assert (result.outcome, result.reason, result.rpc_code) == ("up", "ok", -32001)
    assert agent.methods == [("tasks/get", None)]


def test_a_hybrid_sdk_agent_is_probed_once_per_version(probe, sdk_agents):
    agent = _sdk(sdk_agents, compat=True)
    interfaces = [{"url": agent.rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": v} for v in ("1.0", "0.3")]
    results = [probe.probe(target) for target in probe_targets(interfaces)]
    assert [(r.target.method, r.outcome) for r in results] == [("GetTask", "up"), ("tasks/get", "up")]
    assert agent.methods == [("GetTask", "1.0"), ("tasks/get", None)]


def test_a_1x_only_agent_behind_a_0_3_card_is_a_protocol_mismatch(probe, sdk_agents):
    agent = _sdk(sdk_agents, card="0.3")  # the card claims 0.3; the endpoint only speaks 1.0
    result = probe.probe(ProbeTarget(agent.rpc_url, "0.3.0"))
    assert (result.outcome, result.reason, result.rpc_code) == ("degraded", "protocolMismatch", -32601)


def test_a_stopped_agent_is_down_and_up_again_once_restarted(probe, sdk_agents):
    agent = _sdk(sdk_agents)
    target = ProbeTarget(agent.rpc_url, "1.0")
    assert probe.probe(target).outcome == "up"
    agent.stop()
    stopped = probe.probe(target)
    assert (stopped.outcome, stopped.reason) == ("down", "connectionError")
    agent.start()
    assert probe.probe(target).outcome == "up"


@pytest.mark.parametrize(
    ("behaviour", "outcome", "reason", "status", "code"),
    [
        (raw(500, b"Internal Server Error", "text/plain"), "down", "serverError", 500, None),
        (raw(502, b'{"jsonrpc":"2.0"}', "application/json"), "down", "serverError", 502, None),
        (raw(200, b"<!doctype html><title>Welcome</title>"), "down", "notJson", 200, None),
        (raw(404, b"<h1>Not Found</h1>"), "down", "notJson", 404, None),
        (raw(200, b'{"status": "ok"}', "application/json"), "down", "notJsonRpc", 200, None),
        (raw(307, b"", "text/plain", Location="/elsewhere"), "down", "redirect", 307, None),
        (bearer_required(), "up", "authRequired", 401, None),
        (raw(403, b"forbidden", "text/plain"), "up", "authRequired", 403, None),
        (rpc_error(-32009, "VersionNotSupportedError"), "degraded", "protocolMismatch", 200, -32009),
        (rpc_error(-32601, "Method not found"), "degraded", "protocolMismatch", 200, -32601),
        (rpc_error(-32600, "Invalid Request", same_id=False), "down", "wrongId", 200, -32600),
        (rpc_error(-32001, same_id=False), "down", "wrongId", 200, -32001),
        (rpc_error(-32603, "Internal error"), "up", "ok", 200, -32603),
        (TASK_NOT_FOUND, "up", "ok", 200, -32001),
    ],
    ids=[
        "500",
        "502-json",
        "html",
        "404-html",
        "json-not-rpc",
        "redirect",
        "bearer",
        "403",
        "version-not-supported",
        "method-not-found",
        "invalid-request-wrong-id",
        "wrong-id",
        "internal-error",
        "task-not-found",
    ],
)
def test_plain_agents_get_the_state_issue_5_gives_them(probe, behaviour, outcome, reason, status, code):
    agent = PlainAgent(behaviour)
    try:
        result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    finally:
        agent.stop()
    assert (result.outcome, result.reason, result.http_status, result.rpc_code) == (outcome, reason, status, code)
    assert {request.get("method") for request, _ in agent.requests} == {"GetTask"}


def test_an_agent_that_never_answers_is_down_once_the_deadline_passes(services):
    probe = HealthProbe(services.http, timeout=0.3, slow_after=1.0)
    agent = PlainAgent("hang")
    try:
        result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    finally:
        agent.stop()
    assert (result.outcome, result.reason, result.http_status, result.rpc_code) == ("down", "timeout", None, None)
    assert {request.get("method") for request, _ in agent.requests} == {"GetTask"}


def test_an_invalid_request_answered_with_a_null_id_is_a_protocol_mismatch(probe):
    def null_id(_request, _headers):  # type: ignore[no-untyped-def]
        return (
            200,
            {"Content-Type": "application/json"},
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}',
        )

    agent = PlainAgent(null_id)
    try:
        result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    finally:
        agent.stop()
    assert (result.outcome, result.reason, result.rpc_code) == ("degraded", "protocolMismatch", -32600)


def test_a_slow_answer_is_degraded(services):
    probe = HealthProbe(services.http, timeout=2.0, slow_after=0.05)
    agent = PlainAgent(slow(0.15, TASK_NOT_FOUND))
    try:
        result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    finally:
        agent.stop()
    assert (result.outcome, result.reason) == ("degraded", "slow")
    assert result.latency_ms is not None and result.latency_ms >= 150


def test_the_probe_asks_for_a_random_task_with_a_clear_user_agent(probe):
    agent = PlainAgent()
    try:
        probe.probe(ProbeTarget(agent.rpc_url, "1.0.3"))
        probe.probe(ProbeTarget(agent.rpc_url, "1.0.3"))
    finally:
        agent.stop()
    (first, headers), (second, _) = agent.requests
    assert first["method"] == "GetTask" and first["jsonrpc"] == "2.0"
    assert len(first["params"]["id"]) == 36 and first["params"]["id"] != second["params"]["id"]
    assert first["id"] != first["params"]["id"]
    assert headers["a2a-version"] == "1.0"  # Major.Minor only (A2A v1.0 §3.6)
    assert headers["user-agent"].startswith("Agentdex/") and "health-probe" in headers["user-agent"]


def test_a_refused_address_is_down_without_any_request(services):
    probe = HealthProbe(services.http, timeout=0.3, slow_after=1.0)
    result = probe.probe(ProbeTarget("http://10.255.255.1/a2a", "1.0"))
    assert (result.outcome, result.reason) == ("down", "refused")


def test_probe_targets_are_the_json_rpc_interfaces_without_repeats():
    interfaces = [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0.1"},
        {"url": "https://a.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "https://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "https://a.example/rpc", "protocolBinding": "jsonrpc", "protocolVersion": "0.3"},
        {"url": "https://a.example/old", "protocolBinding": "JSONRPC", "protocolVersion": None},
    ] + [{"url": f"https://a.example/{i}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"} for i in range(9)]
    targets = probe_targets(interfaces)
    assert [(t.url, t.method, t.version_header) for t in targets] == [
        ("https://a.example/rpc", "GetTask", "1.0"),
        ("https://a.example/rpc", "tasks/get", None),
        ("https://a.example/old", "tasks/get", None),
        ("https://a.example/0", "GetTask", "1.0"),
    ]


@pytest.mark.parametrize(
    ("version", "method", "header"),
    [("²", "tasks/get", None), ("1.٣", "GetTask", "1"), ("٣.0", "tasks/get", None), ("2.1\r\nX: y", "GetTask", "2.1")],
)
def test_a_version_written_in_other_digits_is_probed_without_failing(version, method, header):
    target = ProbeTarget("https://a.example/rpc", version)
    assert (target.method, target.version_header) == (method, header)  # a header only ever of ASCII digits


@pytest.mark.parametrize("version", ["².0", "1.٣"])
def test_checking_an_agent_whose_version_has_other_digits_answers(client, auth, version):
    card = make_card("Odd Digits", url="http://127.0.0.1:9/a2a")
    card["supportedInterfaces"][0]["protocolVersion"] = version
    created = client.post("/v1/agents", json={"card": card, "cardUrl": "https://odd.example/card.json"}, headers=auth)
    assert created.status_code == 201, created.json
    checked = client.post(f"/v1/agents/{created.json['id']}/check", headers=auth)
    assert checked.status_code == 200, checked.get_data()[:300]  # was a 500 (int("²"), a header "1.٣")
