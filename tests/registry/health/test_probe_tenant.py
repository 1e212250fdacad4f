"""A v1.0 interface that declares a `tenant` is probed with it: every v1.0 request message carries
`tenant`, which the JSON-RPC binding sends in `params`, and a multi-tenant endpoint routes nothing
without it. Proved against a loopback agent that requires its tenant, through the API, and against
the official a2a-sdk (which must accept the field)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from registry.health.probe import HealthProbe, ProbeTarget, probe_targets
from tests.support.a2a_agents import CARD_PATH, LOOPBACK_DEADLINE, PlainAgent, SdkAgent, tenant_required

TENANT = "acme-eu"


@pytest.fixture
def probe(services) -> HealthProbe:  # type: ignore[no-untyped-def]
    return HealthProbe(services.http, timeout=LOOPBACK_DEADLINE, slow_after=LOOPBACK_DEADLINE)


@pytest.fixture
def tenant_agent() -> Iterator[PlainAgent]:
    agent = PlainAgent(tenant_required(TENANT), tenant=TENANT)
    yield agent
    agent.stop()


def test_the_probe_sends_the_interface_tenant_in_the_params(probe, tenant_agent):
    result = probe.probe(ProbeTarget(tenant_agent.rpc_url, "1.0", TENANT))
    assert (result.outcome, result.reason, result.rpc_code) == ("up", "ok", -32001)
    ((request, headers),) = tenant_agent.requests
    assert request["method"] == "GetTask" and request["params"]["tenant"] == TENANT
    assert headers["a2a-version"] == "1.0"


def test_without_the_tenant_the_endpoint_routes_nowhere(probe, tenant_agent):
    # What every probe of such an agent met before the tenant was sent: "down".
    result = probe.probe(ProbeTarget(tenant_agent.rpc_url, "1.0"))
    assert (result.outcome, result.http_status) == ("down", 404)
    assert "tenant" not in tenant_agent.requests[0][0]["params"]


def test_a_registered_multi_tenant_agent_is_checked_with_its_tenant(client, auth, tenant_agent):
    response = client.post("/v1/agents", json={"url": tenant_agent.base_url + CARD_PATH}, headers=auth)
    assert response.status_code == 201, response.json
    agent = response.json
    assert agent["interfaces"] == [
        {"url": tenant_agent.rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": TENANT}
    ]
    checked = client.post(f"/v1/agents/{agent['id']}/check", headers=auth)
    assert checked.status_code == 200, checked.json
    (item,) = checked.json["items"]
    assert (item["outcome"], item["reason"], item["rpcCode"]) == ("up", "ok", -32001)
    assert [request["params"].get("tenant") for request, _ in tenant_agent.requests] == [TENANT]
    assert client.get(f"/v1/agents/{agent['id']}").json["health"]["state"] == "up"


def test_the_official_sdk_accepts_the_tenant_the_probe_sends(probe):
    agent = SdkAgent()
    try:
        result = probe.probe(ProbeTarget(agent.rpc_url, "1.0", TENANT))
    finally:
        agent.stop()
    assert (result.outcome, result.reason, result.rpc_code) == ("up", "ok", -32001)
    assert agent.methods == [("GetTask", "1.0")] and agent.messages == []


def test_each_tenant_of_an_endpoint_is_its_own_target():
    interfaces = [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t1"},
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t2"},
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t1"},
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    ]
    assert [target.tenant for target in probe_targets(interfaces)] == ["t1", "t2", None]
