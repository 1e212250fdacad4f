"""Registering agents through the API: by URL from real loopback servers, by upload, and refusals."""

from __future__ import annotations

import ipaddress

from sqlalchemy import func, select

from registry.app import create_app
from registry.container import build_services
from registry.schema import Agent, AgentCard, AuditEntry
from tests.support.cards import make_card, make_v03_card


def _count(services, model) -> int:  # type: ignore[no-untyped-def]
    with services.sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


def test_register_by_base_url_discovers_well_known_card(client, auth, card_server, card, services):
    card_server.serve_json("/.well-known/agent-card.json", card, headers={"ETag": '"v1"'})
    response = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth)
    assert response.status_code == 201, response.json
    agent = response.json
    assert agent["cardUrl"] == card_server.url("/.well-known/agent-card.json")
    assert agent["name"] == "Weather Agent"
    assert agent["source"] == "crawled"
    assert agent["tags"] == ["forecast", "weather"]
    assert agent["protocolVersions"] == ["1.0"]
    assert [s["id"] for s in agent["skills"]] == ["skill-0"]
    assert response.headers["Location"].endswith(agent["id"])
    stored = client.get(f"/v1/agents/{agent['id']}/card")
    assert stored.json == card
    with services.sessions() as session:
        version = session.scalar(select(AgentCard))
        assert (version.version, version.etag, version.is_current) == (1, '"v1"', True)


def test_register_falls_back_to_pre_03_agent_json(client, auth, card_server):
    card_server.serve_json("/.well-known/agent.json", make_v03_card("Old Agent"))
    response = client.post("/v1/agents", json={"url": card_server.base_url + "/"}, headers=auth)
    assert response.status_code == 201, response.json
    assert response.json["cardUrl"].endswith("/.well-known/agent.json")
    assert response.json["protocolVersions"] == ["0.3.0"]


def test_register_exact_card_url(client, auth, card_server, card):
    url = card_server.serve_json("/cards/weather.json", card)
    response = client.post("/v1/agents", json={"url": url}, headers=auth)
    assert response.status_code == 201, response.json
    assert response.json["cardUrl"] == url


def test_invalid_card_is_rejected_with_every_issue_and_nothing_stored(client, auth, card_server, services):
    bad = make_card("Broken")
    del bad["version"]
    bad["skills"].append(dict(bad["skills"][0]))  # duplicate skill id
    card_server.serve_json("/.well-known/agent-card.json", bad)
    response = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth)
    assert response.status_code == 422
    error = response.json["error"]
    assert error["code"] == "invalid_card"
    issues = error["details"]["issues"]
    assert all({"path", "rule", "severity", "message"} <= set(i) for i in issues)
    assert len([i for i in issues if i["severity"] == "error"]) >= 2
    for model in (Agent, AgentCard):
        assert _count(services, model) == 0


def test_same_card_url_twice_is_a_conflict_naming_the_existing_agent(client, auth, card_server, card):
    card_server.serve_json("/.well-known/agent-card.json", card)
    first = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth).json
    again = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth)
    assert again.status_code == 409
    assert again.json["error"]["details"]["agentId"] == first["id"]
    exact = client.post("/v1/agents", json={"url": first["cardUrl"]}, headers=auth)
    assert exact.status_code == 409


def test_unreachable_agent_is_502_with_a_clear_message(client, auth, card_server):
    url = card_server.base_url
    card_server.close()
    response = client.post("/v1/agents", json={"url": url}, headers=auth)
    assert response.status_code == 502
    assert response.json["error"]["code"] == "agent_unreachable"
    assert response.json["error"]["message"]


def test_missing_card_everywhere_is_502_listing_what_was_tried(client, auth, card_server):
    response = client.post("/v1/agents", json={"url": card_server.base_url}, headers=auth)
    assert response.status_code == 502
    assert "agent-card.json" in response.json["error"]["message"]


def test_loopback_is_refused_unless_the_operator_allowlists_it(settings, card_server, card):
    import dataclasses

    strict = dataclasses.replace(settings, allowed_networks=())
    services = build_services(strict)
    try:
        token = services.tokens.create("carol", ["agents:write"]).token
        card_server.serve_json("/.well-known/agent-card.json", card)
        response = (
            create_app(services=services)
            .test_client()
            .post("/v1/agents", json={"url": card_server.base_url}, headers={"Authorization": f"Bearer {token}"})
        )
        assert response.status_code == 422
        assert response.json["error"]["code"] == "target_refused"
        assert card_server.requests == []
    finally:
        services.close()
    assert ipaddress.ip_address("127.0.0.1") in settings.allowed_networks[0]


def test_upload_registers_a_pushed_card(client, auth, card):
    response = client.post(
        "/v1/agents",
        json={"card": card, "cardUrl": "https://agent.example.com/.well-known/agent-card.json"},
        headers=auth,
    )
    assert response.status_code == 201, response.json
    assert response.json["source"] == "pushed"


def test_upload_needs_card_url_and_an_object(client, auth, card):
    assert client.post("/v1/agents", json={"card": card}, headers=auth).status_code == 422
    assert (
        client.post("/v1/agents", json={"card": "nope", "cardUrl": "https://a.example"}, headers=auth).status_code
        == 422
    )
    # A malformed URL is a malformed request (400 `invalid_url`, tests/registry/catalog/test_card_url_refusals.py).
    assert client.post("/v1/agents", json={"card": card, "cardUrl": "ftp://a.example"}, headers=auth).status_code == 400


def test_writes_need_a_valid_token_with_scope(client, card, services):
    body = {"card": card, "cardUrl": "https://a.example/card.json"}
    assert client.post("/v1/agents", json=body).status_code == 401
    assert client.post("/v1/agents", json=body, headers={"Authorization": "Bearer nope"}).status_code == 401
    relay_only = services.tokens.create("relayer", ["relay"]).token
    response = client.post("/v1/agents", json=body, headers={"Authorization": f"Bearer {relay_only}"})
    assert response.status_code == 403
    assert response.json["error"]["code"] == "forbidden"


def test_bad_bodies_get_4xx_never_500(client, auth, app):
    assert (
        client.post("/v1/agents", data=b"{not json", headers=auth, content_type="application/json").status_code == 400
    )
    assert client.post("/v1/agents", json=[1, 2], headers=auth).status_code == 400
    assert client.post("/v1/agents", json={"url": 5}, headers=auth).status_code == 422
    assert client.post("/v1/agents", json={"url": "https://a.example", "extra": 1}, headers=auth).status_code == 400
    assert client.post("/v1/agents", data=b"NaN", headers=auth, content_type="application/json").status_code == 400
    huge = b'{"url": "' + b"a" * (app.config["MAX_CONTENT_LENGTH"] + 10) + b'"}'
    response = client.post("/v1/agents", data=huge, headers=auth, content_type="application/json")
    assert response.status_code == 413
    assert response.json["error"]["code"] == "payload_too_large"


def test_a_wrong_method_is_405_naming_the_allowed_ones(client, auth):
    response = client.delete("/v1/agents", headers=auth)
    assert response.status_code == 405
    assert response.json["error"]["code"] == "method_not_allowed"
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


def test_import_registers_many_and_reports_each_failure(client, auth, services):
    items = [
        {"card": make_card(f"Agent {i}", tags=["bulk"]), "cardUrl": f"https://a{i}.example/card.json"} for i in range(5)
    ]
    items.append({"card": {"name": "broken"}, "cardUrl": "https://broken.example/card.json"})
    items.append({"card": make_card("Dup"), "cardUrl": "https://a0.example/card.json"})
    response = client.post("/v1/agents/import", json={"items": items}, headers=auth)
    assert response.status_code == 200, response.json
    assert (response.json["created"], response.json["failed"]) == (5, 2)
    errors = {r["index"]: r["error"]["code"] for r in response.json["results"] if r["error"]}
    assert errors == {5: "invalid_card", 6: "conflict"}
    assert _count(services, Agent) == 5
    with services.sessions() as session:
        assert session.scalar(select(func.count()).select_from(AuditEntry)) >= 1
