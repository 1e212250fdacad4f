"""Health over HTTP: the agent's `health`, `GET …/health`, `POST …/check`, the search filters,
and the OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.a2a_agents import SdkAgent
from tests.support.cards import make_card


@pytest.fixture
def sdk_agent() -> Iterator[SdkAgent]:
    agent = SdkAgent()
    yield agent
    agent.stop()
    assert agent.messages == []


@pytest.fixture
def agent_id(client, auth, sdk_agent) -> str:  # type: ignore[no-untyped-def]
    body = {
        "card": make_card("Probe Me", tags=["probe"], url=sdk_agent.rpc_url),
        "cardUrl": sdk_agent.base_url + "/card.json",
    }
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.json
    return response.json["id"]


def test_a_new_agent_has_unknown_health_until_probed(client, agent_id):
    unknown = {"state": "unknown", "checkedAt": None, "latencyMs": None, "reason": None, "uptime24h": None}
    assert client.get(f"/v1/agents/{agent_id}").json["health"] == unknown
    page = client.get(f"/v1/agents/{agent_id}/health").json
    assert page["agentId"] == agent_id and page["items"] == [] and page["health"]["state"] == "unknown"


def test_check_probes_now_and_health_lists_the_checks(client, auth, agent_id):
    assert client.post(f"/v1/agents/{agent_id}/check").status_code == 401
    checked = client.post(f"/v1/agents/{agent_id}/check", headers=auth)
    assert checked.status_code == 200, checked.json
    (item,) = checked.json["items"]
    assert (item["method"], item["outcome"], item["reason"], item["rpcCode"], item["httpStatus"]) == (
        "GetTask",
        "up",
        "ok",
        -32001,
        200,
    )
    health = client.get(f"/v1/agents/{agent_id}").json["health"]
    assert health["state"] == "up" and health["uptime24h"] == 1.0 and health["checkedAt"].endswith("Z")
    client.post(f"/v1/agents/{agent_id}/check", headers=auth)
    assert len(client.get(f"/v1/agents/{agent_id}/health").json["items"]) == 2
    assert len(client.get(f"/v1/agents/{agent_id}/health?limit=1").json["items"]) == 1


def test_unknown_agents_and_parameters_are_refused(client, auth):
    assert client.get("/v1/agents/nope-nope/health").status_code == 404
    assert client.post("/v1/agents/nope-nope/check", headers=auth).status_code == 404
    assert client.get("/v1/agents?health=sideways").status_code == 422
    assert client.get("/v1/agents?includeDead=maybe").status_code == 422


def test_search_by_health(client, auth, agent_id):
    assert [a["id"] for a in client.get("/v1/agents?health=unknown").json["items"]] == [agent_id]
    assert client.get("/v1/agents?health=up").json["items"] == []
    client.post(f"/v1/agents/{agent_id}/check", headers=auth)
    assert [a["id"] for a in client.get("/v1/agents?health=up&tag=probe&includeDead=true").json["items"]] == [agent_id]


def test_the_openapi_document_describes_health(client):
    doc = client.get("/openapi.json").json
    assert "/v1/agents/{agent_id}/health" in doc["paths"] and "/v1/agents/{agent_id}/check" in doc["paths"]
    names = {p["name"] for p in doc["paths"]["/v1/agents"]["get"]["parameters"]}
    assert {"health", "includeDead"} <= names
