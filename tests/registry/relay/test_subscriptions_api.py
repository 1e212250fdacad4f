"""Relay subscriptions over the API: creation, what is stored, ownership, rotation, and refusals."""

from __future__ import annotations

import base64
import dataclasses
import ipaddress
import re

import pytest
from sqlalchemy import select

from registry.app import create_app
from registry.container import build_services
from registry.relay.subscriptions import TOKEN_PREFIX, hash_relay_token
from registry.schema import RelaySubscription
from tests.registry.relay.conftest import register_agent, subscribe

pytestmark = pytest.mark.usefixtures("relay")


def test_create_returns_relay_url_and_a_token_shown_once(client, relay_auth, push_agent, receiver, services):
    sub = subscribe(
        client,
        relay_auth,
        push_agent,
        receiver.url,
        taskId="task-1",
        targetToken="client-secret",
        targetAuthorization="Bearer client-jwt",
    )
    assert sub["relayUrl"] == f"http://localhost/relay/{sub['id']}"
    assert (sub["agentId"], sub["taskId"], sub["authMode"], sub["status"]) == (push_agent, "task-1", "token", "active")
    assert sub["hasTargetToken"] and sub["hasTargetAuthorization"]
    secret = sub["relayToken"].removeprefix(TOKEN_PREFIX)
    assert len(base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))) * 8 >= 256
    shown = client.get(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth).json
    assert "relayToken" not in shown and "targetToken" not in shown
    with services.sessions() as session:
        row = session.scalar(select(RelaySubscription))
    assert row.token_hash == hash_relay_token(sub["relayToken"])
    assert b"client-secret" not in row.target_secrets and b"client-jwt" not in row.target_secrets


def test_list_shows_only_own_subscriptions(client, relay_auth, push_agent, receiver, services):
    mine = subscribe(client, relay_auth, push_agent, receiver.url)
    other = {"Authorization": f"Bearer {services.tokens.create('eve', ['relay']).token}"}
    theirs = subscribe(client, other, push_agent, receiver.url)
    listed = client.get("/v1/relay/subscriptions", headers=relay_auth).json
    assert [item["id"] for item in listed["items"]] == [mine["id"]]
    assert client.get(f"/v1/relay/subscriptions/{theirs['id']}", headers=relay_auth).status_code == 404
    assert client.delete(f"/v1/relay/subscriptions/{theirs['id']}", headers=relay_auth).status_code == 404


def test_pages_with_a_cursor(client, relay_auth, push_agent, receiver):
    created = [subscribe(client, relay_auth, push_agent, receiver.url)["id"] for _ in range(3)]
    first = client.get("/v1/relay/subscriptions?limit=2", headers=relay_auth).json
    second = client.get(f"/v1/relay/subscriptions?limit=2&cursor={first['nextCursor']}", headers=relay_auth).json
    assert [i["id"] for i in first["items"] + second["items"]] == created[::-1]
    assert second["nextCursor"] is None


def test_delete_stops_the_relay_url(client, relay_auth, push_agent, receiver):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    assert client.delete(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth).status_code == 204
    assert client.get(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth).status_code == 404
    response = client.post(
        f"/relay/{sub['id']}", json={"task": {"id": "t"}}, headers={"X-A2A-Notification-Token": sub["relayToken"]}
    )
    assert response.status_code == 404


def test_status_can_be_changed_by_the_owner(client, relay_auth, push_agent, receiver):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    url = f"/v1/relay/subscriptions/{sub['id']}"
    assert client.patch(url, json={"status": "disabled"}, headers=relay_auth).json["status"] == "disabled"
    assert client.patch(url, json={"status": "active"}, headers=relay_auth).json["status"] == "active"
    assert client.patch(url, json={"status": "deleted"}, headers=relay_auth).status_code == 422


def test_needs_the_relay_scope(client, auth, push_agent, receiver):
    response = client.post(
        "/v1/relay/subscriptions", json={"agentId": push_agent, "targetUrl": receiver.url}, headers=auth
    )
    assert response.status_code == 403
    assert client.get("/v1/relay/subscriptions").status_code == 401


def test_refused_when_the_card_does_not_push(client, auth, relay_auth, receiver):
    agent_id = register_agent(client, auth, push=False, name="Quiet")
    response = client.post(
        "/v1/relay/subscriptions", json={"agentId": agent_id, "targetUrl": receiver.url}, headers=relay_auth
    )
    assert response.status_code == 422
    assert response.json["error"]["code"] == "push_not_supported"


def test_refused_for_an_unknown_agent(client, relay_auth, receiver):
    response = client.post(
        "/v1/relay/subscriptions", json={"agentId": "nope", "targetUrl": receiver.url}, headers=relay_auth
    )
    assert response.status_code == 404


@pytest.mark.parametrize(
    "target",
    [
        "http://10.1.2.3/hook",  # private
        "http://169.254.169.254/latest/meta-data",  # link-local / cloud metadata
        "http://[::1]:8080/hook",  # loopback outside the allowlisted 127.0.0.0/8
        "http://100.64.0.1/hook",  # CGNAT
        "ftp://127.0.0.1/hook",
        "http://user:pw@127.0.0.1/hook",
    ],
)
def test_refused_when_the_target_fails_the_outbound_policy(client, relay_auth, push_agent, target):
    response = client.post(
        "/v1/relay/subscriptions", json={"agentId": push_agent, "targetUrl": target}, headers=relay_auth
    )
    assert response.status_code == 422, response.json
    assert response.json["error"]["code"] == "target_refused"


def test_plain_http_target_refused_unless_allowed(settings, relay_auth, push_agent, receiver):
    strict = build_services(
        dataclasses.replace(settings, allow_http=False, allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),))
    )
    try:
        response = (
            create_app(services=strict)
            .test_client()
            .post(
                "/v1/relay/subscriptions", json={"agentId": push_agent, "targetUrl": receiver.url}, headers=relay_auth
            )
        )
    finally:
        strict.close()
    assert response.status_code == 422
    assert "plain http is not allowed" in response.json["error"]["message"]


@pytest.mark.parametrize("field", ["targetToken", "targetAuthorization"])
@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb"])
def test_refused_when_a_header_value_has_cr_or_lf(client, relay_auth, push_agent, receiver, field, value):
    response = client.post(
        "/v1/relay/subscriptions",
        json={"agentId": push_agent, "targetUrl": receiver.url, field: value},
        headers=relay_auth,
    )
    assert response.status_code == 422
    assert response.json["error"]["details"]["field"] == field


def test_refused_for_an_unknown_field_or_auth_mode(client, relay_auth, push_agent, receiver):
    base = {"agentId": push_agent, "targetUrl": receiver.url}
    assert client.post("/v1/relay/subscriptions", json={**base, "secret": "x"}, headers=relay_auth).status_code == 400
    assert (
        client.post("/v1/relay/subscriptions", json={**base, "authMode": "hmac"}, headers=relay_auth).status_code == 422
    )


def test_public_url_makes_the_relay_url(settings, services, relay_auth, push_agent, receiver):
    services.settings = dataclasses.replace(services.settings, public_url="https://relay.example.com")
    client = create_app(services=services).test_client()
    assert subscribe(client, relay_auth, push_agent, receiver.url)["relayUrl"].startswith(
        "https://relay.example.com/relay/sub_"
    )


def test_every_relay_route_is_in_the_openapi_document(app, client):
    documented = client.get("/openapi.json").json["paths"]
    routes = {re.sub(r"<(\w+)>", r"{\1}", rule.rule) for rule in app.url_map.iter_rules() if "relay" in rule.rule}
    assert routes and routes <= set(documented)
