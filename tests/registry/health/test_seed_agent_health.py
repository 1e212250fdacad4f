"""A "Protocol Details" agent (card at `GET /agentCard`, JSON-RPC at its root) is health-checked like
any 0.x agent: `tasks/get` for a task that cannot exist, and its `-32001 TASK_NOT_FOUND` answer
means alive. Nothing that sends a message (`tasks/send`) ever reaches it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from registry.health.probe import HealthProbe, ProbeTarget
from tests.support.a2a_agents import LOOPBACK_DEADLINE
from tests.support.seed_agents import TASK_NOT_FOUND, SeedAgent


@pytest.fixture
def probe(services) -> HealthProbe:  # type: ignore[no-untyped-def]
    return HealthProbe(services.http, timeout=LOOPBACK_DEADLINE, slow_after=LOOPBACK_DEADLINE)


@pytest.fixture
def seed_agents() -> Iterator[list[SeedAgent]]:
    started: list[SeedAgent] = []
    yield started
    for agent in started:
        agent.stop()
        assert agent.tasks == {} and "tasks/send" not in agent.methods


def _seed(seed_agents: list[SeedAgent], **options: str) -> SeedAgent:
    agent = SeedAgent(**options)
    seed_agents.append(agent)
    return agent


def test_a_registered_seed_agent_is_checked_and_task_not_found_means_up(client, auth, seed_agents):
    agent = _seed(seed_agents)
    registered = client.post("/v1/agents", json={"url": agent.base_url}, headers=auth)
    assert registered.status_code == 201, registered.json
    agent_id = registered.json["id"]
    checked = client.post(f"/v1/agents/{agent_id}/check", headers=auth)
    assert checked.status_code == 200, checked.json
    (item,) = checked.json["items"]
    assert (item["method"], item["outcome"], item["reason"], item["rpcCode"], item["httpStatus"]) == (
        "tasks/get",
        "up",
        "ok",
        TASK_NOT_FOUND,
        200,
    )
    assert agent.methods == ["tasks/get"]
    assert agent.calls[0].version_header is None  # a 0.3 interface: no A2A-Version (v1.0 §3.6.2)
    assert client.get(f"/v1/agents/{agent_id}").json["health"]["state"] == "up"


def test_the_probe_alone_reads_task_not_found_as_alive(probe, seed_agents):
    agent = _seed(seed_agents)
    result = probe.probe(ProbeTarget(agent.rpc_url, "0.3.0"))
    assert (result.outcome, result.reason, result.rpc_code) == ("up", "ok", TASK_NOT_FOUND)


def test_a_seed_endpoint_behind_a_1_0_card_is_a_protocol_mismatch(probe, seed_agents):
    # It accepts `A2A-Version: 1.0` but knows only the `tasks/*` names, so the v1.0 `GetTask` the
    # card asks for is unknown to it: reachable, not speaking what its card claims.
    agent = _seed(seed_agents, card="1.0")
    result = probe.probe(ProbeTarget(agent.rpc_url, "1.0"))
    assert (result.outcome, result.reason, result.rpc_code) == ("degraded", "protocolMismatch", -32601)
    assert [(call.method, call.version_header) for call in agent.calls] == [("GetTask", "1.0")]
