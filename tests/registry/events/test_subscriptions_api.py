"""`/v1/events/subscriptions`: anyone with a token subscribes; only the owner (or an admin) sees,
changes or deletes a subscription; every refusal says which field and why."""

from __future__ import annotations

from typing import Any

import pytest

from registry.change_events import EVENT_TYPES
from tests.registry.events.conftest import subscribe


def test_anyone_with_a_token_subscribes_and_learns_how_to_verify_deliveries(client, follower_auth, receiver, services):
    sub = subscribe(
        client, follower_auth, receiver.url, ["registered", "io.agentdex.agent.deleted"], filter={"tags": ["Weather "]}
    )
    assert sub["id"].startswith("evs_") and sub["status"] == "active"
    assert sub["types"] == ["io.agentdex.agent.registered", "io.agentdex.agent.deleted"]
    assert sub["filter"] == {"tags": ["weather"], "owner": None}
    key = services.registry_keys.active("EdDSA")
    assert sub["signing"]["scheme"] == "v1a" and sub["signing"]["kid"] == key.kid
    assert sub["signing"]["publicKey"].startswith("whpk_")
    assert sub["signing"]["jwksUrl"].endswith("/.well-known/jwks.json")
    assert key.kid in {k["kid"] for k in client.get("/.well-known/jwks.json").json["keys"]}
    shown = client.get(f"/v1/events/subscriptions/{sub['id']}", headers=follower_auth).json
    assert shown == sub


def test_subscriptions_are_their_owners_and_an_admins(client, follower_auth, auth, admin_token, receiver):
    mine = subscribe(client, follower_auth, receiver.url, ["updated"])
    theirs = subscribe(client, auth, receiver.url, ["deleted"], filter={"owner": "follower"})
    assert theirs["filter"] == {"tags": [], "owner": "follower"}
    listed = client.get("/v1/events/subscriptions", headers=follower_auth).json
    assert [s["id"] for s in listed["items"]] == [mine["id"]] and listed["nextCursor"] is None
    admin = {"Authorization": f"Bearer {admin_token}"}
    assert [s["id"] for s in client.get("/v1/events/subscriptions", headers=admin).json["items"]] == [
        theirs["id"],
        mine["id"],
    ]
    assert client.get(f"/v1/events/subscriptions/{theirs['id']}", headers=follower_auth).status_code == 404
    assert client.delete(f"/v1/events/subscriptions/{theirs['id']}", headers=follower_auth).status_code == 404
    assert client.delete(f"/v1/events/subscriptions/{mine['id']}", headers=follower_auth).status_code == 204
    assert client.get(f"/v1/events/subscriptions/{mine['id']}", headers=follower_auth).status_code == 404


def test_a_subscription_can_be_disabled_and_enabled(client, follower_auth, receiver):
    sub = subscribe(client, follower_auth, receiver.url, ["updated"])
    path = f"/v1/events/subscriptions/{sub['id']}"
    off = client.patch(path, json={"status": "disabled"}, headers=follower_auth).json
    assert off["status"] == "disabled" and off["statusReason"] == "disabled by its owner"
    assert client.patch(path, json={"status": "active"}, headers=follower_auth).json["status"] == "active"


@pytest.mark.parametrize(
    "body,status,code,field",
    [
        ({"targetUrl": "http://127.0.0.1:9/hook", "types": ["moved"]}, 422, "invalid_request", "types"),
        ({"targetUrl": "http://127.0.0.1:9/hook", "types": []}, 422, "invalid_request", "types"),
        ({"targetUrl": "http://127.0.0.1:9/hook", "types": "registered"}, 422, "invalid_request", "types"),
        ({"types": ["registered"]}, 422, "invalid_request", None),
        ({"targetUrl": "http://10.1.2.3/hook", "types": ["registered"]}, 422, "target_refused", "targetUrl"),
        ({"targetUrl": "ftp://127.0.0.1/hook", "types": ["registered"]}, 422, "target_refused", "targetUrl"),
        (
            {"targetUrl": "http://127.0.0.1:9/hook", "types": ["registered"], "filter": {"owner": "nobody"}},
            422,
            "invalid_request",
            "filter.owner",
        ),
        (
            {"targetUrl": "http://127.0.0.1:9/hook", "types": ["registered"], "filter": {"tags": "weather"}},
            422,
            "invalid_request",
            "filter.tags",
        ),
        (
            {"targetUrl": "http://127.0.0.1:9/hook", "types": ["registered"], "targetToken": "a\r\nX-Evil: 1"},
            422,
            "invalid_request",
            "targetToken",
        ),
        ({"targetUrl": "http://127.0.0.1:9/hook", "types": ["registered"], "agentId": "x"}, 400, "bad_request", None),
    ],
)
def test_refusals_name_the_field(client, follower_auth, body: dict[str, Any], status, code, field):
    response = client.post("/v1/events/subscriptions", json=body, headers=follower_auth)
    assert response.status_code == status, response.json
    error = response.json["error"]
    assert error["code"] == code, error
    if field:
        assert error["details"]["field"] == field
    if field == "types":
        assert "known" in error["details"] or "non-empty" in error["message"]


def test_a_token_is_needed(client, receiver):
    response = client.post("/v1/events/subscriptions", json={"targetUrl": receiver.url, "types": ["registered"]})
    assert response.status_code == 401


def test_the_relay_keeps_to_its_own_subscriptions(client, follower_auth, services, receiver):
    sub = subscribe(client, follower_auth, receiver.url, ["registered"])
    relay_auth = {"Authorization": f"Bearer {services.tokens.create('relay-client', ['relay']).token}"}
    assert client.get("/v1/relay/subscriptions", headers=relay_auth).json["items"] == []
    admin = {"Authorization": f"Bearer {services.tokens.create('root2', ['admin']).token}"}
    assert client.get(f"/v1/relay/subscriptions/{sub['id']}", headers=admin).status_code == 404
    # Nobody can push into a subscription the registry feeds: the relay URL does not exist for it.
    assert client.post(f"/relay/{sub['id']}", json={}, headers={"X-A2A-Notification-Token": "x"}).status_code == 404


def test_the_openapi_document_describes_the_events_api(client):
    document = client.get("/openapi.json").json
    assert {"post", "get"} <= set(document["paths"]["/v1/events/subscriptions"])
    assert "/v1/events/subscriptions/{sub_id}/replay" in document["paths"]
    schema = document["components"]["schemas"]["EventSubscriptionRequest"]
    assert schema["properties"]["types"]["items"]["enum"] == list(EVENT_TYPES)
