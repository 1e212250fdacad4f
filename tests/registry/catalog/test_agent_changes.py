"""Changing agents: new card versions with history and drift, refresh, status, delete, ownership."""

from __future__ import annotations

from sqlalchemy import func, select

from registry.schema import AgentTerm, AuditEntry
from tests.support.cards import make_card, with_changes


def _register(client, auth, card, url="https://agent.example.com/.well-known/agent-card.json"):  # type: ignore[no-untyped-def]
    response = client.post("/v1/agents", json={"card": card, "cardUrl": url}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def test_push_new_card_keeps_history_and_shows_drift(client, auth, card):
    agent = _register(client, auth, card)
    changed = with_changes(card, description="Now with radar maps", version="1.1.0")
    changed["skills"].append({"id": "radar", "name": "Radar", "description": "radar images", "tags": ["Maps"]})
    response = client.put(f"/v1/agents/{agent['id']}/card", json=changed, headers=auth)
    assert response.status_code == 200, response.json
    assert response.headers["X-Agentdex-Changed"] == "true"
    assert response.json["cardVersion"] == 2
    assert "maps" in response.json["tags"]
    versions = client.get(f"/v1/agents/{agent['id']}/versions").json["items"]
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["isCurrent"] and not versions[1]["isCurrent"]
    assert set(versions[0]["changes"]["changed"]) == {"/description", "/version"}
    assert versions[0]["changes"]["added"] == ["/skills/radar"]
    assert versions[1]["changes"] is None
    assert client.get(f"/v1/agents/{agent['id']}/card?version=1").json == card
    assert client.get(f"/v1/agents/{agent['id']}/card").json == changed


def test_pushing_the_same_card_creates_no_version(client, auth, card):
    agent = _register(client, auth, card)
    response = client.put(f"/v1/agents/{agent['id']}/card", json=card, headers=auth)
    assert response.headers["X-Agentdex-Changed"] == "false"
    assert len(client.get(f"/v1/agents/{agent['id']}/versions").json["items"]) == 1


def test_invalid_pushed_card_changes_nothing(client, auth, card):
    agent = _register(client, auth, card)
    response = client.put(f"/v1/agents/{agent['id']}/card", json={"name": "x"}, headers=auth)
    assert response.status_code == 422
    assert client.get(f"/v1/agents/{agent['id']}").json["cardVersion"] == 1
    assert client.get(f"/v1/agents/{agent['id']}/card").json == card


def test_refresh_fetches_the_card_again(client, auth, card_server, card):
    card_server.serve_json("/.well-known/agent-card.json", card)
    agent = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth).json
    same = client.post(f"/v1/agents/{agent['id']}/refresh", headers=auth)
    assert same.headers["X-Agentdex-Changed"] == "false"
    card_server.serve_json("/.well-known/agent-card.json", with_changes(card, name="Weather Agent 2"))
    changed = client.post(f"/v1/agents/{agent['id']}/refresh", headers=auth)
    assert changed.status_code == 200
    assert changed.headers["X-Agentdex-Changed"] == "true"
    assert changed.json["name"] == "Weather Agent 2"
    assert changed.json["source"] == "crawled"


def test_deprecate_hides_from_default_search_but_keeps_the_entry(client, auth, card):
    agent = _register(client, auth, card)
    response = client.patch(
        f"/v1/agents/{agent['id']}", json={"status": "deprecated", "statusMessage": "use v2"}, headers=auth
    )
    assert response.status_code == 200
    assert (response.json["status"], response.json["statusMessage"]) == ("deprecated", "use v2")
    assert client.get("/v1/agents?tag=weather").json["items"] == []
    assert [a["id"] for a in client.get("/v1/agents?tag=weather&status=deprecated").json["items"]] == [agent["id"]]
    # the status alone (it drives the search), and with text (checked on the agent's row)
    assert [a["id"] for a in client.get("/v1/agents?status=deprecated").json["items"]] == [agent["id"]]
    assert client.get("/v1/agents").json["items"] == []
    assert client.get("/v1/agents?q=weather").json["items"] == []
    assert [a["id"] for a in client.get("/v1/agents?q=weather&status=any").json["items"]] == [agent["id"]]
    assert client.patch(f"/v1/agents/{agent['id']}", json={"status": "deleted"}, headers=auth).status_code == 422


def test_delete_removes_the_agent_and_the_audit_log_keeps_the_fact(client, auth, card, services):
    agent = _register(client, auth, card)
    assert client.delete(f"/v1/agents/{agent['id']}", headers=auth).status_code == 204
    assert client.get(f"/v1/agents/{agent['id']}").status_code == 404
    assert client.get("/v1/agents?tag=weather").json["items"] == []
    with services.sessions() as session:
        actions = session.scalars(select(AuditEntry.action).where(AuditEntry.agent_id == agent["id"])).all()
        assert session.scalar(select(func.count()).select_from(AgentTerm)) == 0  # no key cascades them
    assert actions == ["agent.register", "agent.delete"]
    again = client.post("/v1/agents", json={"card": card, "cardUrl": agent["cardUrl"]}, headers=auth)
    assert again.status_code == 201


def test_only_the_owner_or_an_admin_may_change_an_agent(client, auth, other_token, admin_token, card):
    agent = _register(client, auth, card)
    other = {"Authorization": f"Bearer {other_token}"}
    assert client.patch(f"/v1/agents/{agent['id']}", json={"status": "deprecated"}, headers=other).status_code == 403
    assert client.delete(f"/v1/agents/{agent['id']}", headers=other).status_code == 403
    assert client.put(f"/v1/agents/{agent['id']}/card", json=card, headers=other).status_code == 403
    admin = {"Authorization": f"Bearer {admin_token}"}
    assert client.patch(f"/v1/agents/{agent['id']}", json={"status": "deprecated"}, headers=admin).status_code == 200


def test_unknown_agent_is_404_everywhere(client, auth):
    for method, path in [
        ("get", "/v1/agents/nope-nope"),
        ("get", "/v1/agents/nope-nope/card"),
        ("get", "/v1/agents/nope-nope/versions"),
        ("patch", "/v1/agents/nope-nope"),
        ("delete", "/v1/agents/nope-nope"),
    ]:
        kwargs = {"headers": auth, "json": {"status": "active"}} if method == "patch" else {"headers": auth}
        response = getattr(client, method)(path, **kwargs)
        assert response.status_code == 404, path
        assert response.json["error"]["code"] == "not_found"


def test_card_for_a_new_agent_is_versioned_from_one(client, auth):
    agent = _register(client, auth, make_card("Solo"))
    assert agent["cardVersion"] == 1
