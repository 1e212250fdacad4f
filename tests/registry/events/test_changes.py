"""Each change to the catalog produces exactly its event, written with the change: registration
(one, an import, a manifest's listing goes the same way), a new card version, deprecation and back,
deletion, health and signature roll-ups changing state. The subscriber parses each with the
CloudEvents SDK and verifies its Standard Webhooks signature with the registry's JWKS."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from registry.change_events import ChangeEvent
from registry.schema import AuditEntry
from signing import generate_key, public_jwks, sign_card
from tests.registry.events.conftest import deliver, events_of, register, subscribe
from tests.support.cards import make_card, with_changes

EVERY = ["registered", "updated", "deprecated", "deleted", "health_changed", "signature_changed"]
PREFIX = "io.agentdex.agent."


def kinds(events) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(e.type.removeprefix(PREFIX), e.subject) for e in events]


def test_the_life_of_an_agent_is_told_in_order(client, auth, follower_auth, receiver, services):
    subscribe(client, follower_auth, receiver.url, EVERY)
    agent_id = register(client, auth, "Weather Agent", tags=["Weather", "forecast"])
    card = with_changes(make_card("Weather Agent", tags=["weather"]), version="2.0.0")
    assert client.put(f"/v1/agents/{agent_id}/card", json=card, headers=auth).status_code == 200
    path = f"/v1/agents/{agent_id}"
    assert client.patch(path, json={"status": "deprecated", "statusMessage": "use v2"}, headers=auth).status_code == 200
    assert client.patch(path, json={"statusMessage": "really, use v2"}, headers=auth).status_code == 200
    assert client.patch(path, json={"status": "active"}, headers=auth).status_code == 200
    assert client.patch(path, json={"status": "active"}, headers=auth).status_code == 200  # no change: no event
    assert client.delete(path, headers=auth).status_code == 204

    assert deliver(services) == 6
    events = events_of(receiver, client.get("/.well-known/jwks.json").json)
    assert kinds(events) == [
        ("registered", agent_id),
        ("updated", agent_id),
        ("deprecated", agent_id),
        ("updated", agent_id),
        ("updated", agent_id),
        ("deleted", agent_id),
    ]
    assert [e.data.get("change") for e in events] == [None, "card", None, "statusMessage", "status", None]
    first = events[0]
    assert first.attributes["specversion"] == "1.0" and first.attributes["datacontenttype"] == "application/json"
    assert first.attributes["source"] == "http://localhost"
    assert abs(first.attributes["time"] - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)
    assert first.received.headers["content-type"] == "application/cloudevents+json"
    assert first.data == {
        "id": agent_id,
        "name": "Weather Agent",
        "cardUrl": "https://weather-agent.example.com/.well-known/agent-card.json",
        "status": "active",
        "cardVersion": 1,
        "version": "1.0.0",
        "tags": ["forecast", "weather"],
        "health": {"state": "unknown", "previous": None},
        "signature": {"state": "unsigned", "previous": None},
        "owner": "alice",
    }
    assert (events[1].data["cardVersion"], events[1].data["version"]) == (2, "2.0.0")
    assert [e.data["status"] for e in events] == ["active", "active", "deprecated", "deprecated", "active", "active"]
    assert len({e.id for e in events}) == 6  # each event its own id
    with services.sessions() as session:  # the outbox is empty once fanned out
        assert session.scalar(select(func.count()).select_from(ChangeEvent)) == 0


def test_an_import_tells_each_agent_it_registered(client, auth, follower_auth, receiver, services):
    subscribe(client, follower_auth, receiver.url, ["registered"])
    items = [
        {"card": make_card(f"Bulk {n}"), "cardUrl": f"https://bulk-{n}.example.com/.well-known/agent-card.json"}
        for n in range(3)
    ]
    items.append({"card": {"name": "broken"}, "cardUrl": "https://broken.example.com/card.json"})
    outcomes = client.post("/v1/agents/import", json={"items": items}, headers=auth).json["results"]
    created = [o["id"] for o in outcomes if o.get("id")]
    assert len(created) == 3
    deliver(services)
    assert sorted(kinds(events_of(receiver, client.get("/.well-known/jwks.json").json))) == sorted(
        ("registered", agent_id) for agent_id in created
    )


def test_a_health_roll_up_that_changes_state_is_told_with_the_state_before(
    client, auth, follower_auth, receiver, services
):
    subscribe(client, follower_auth, receiver.url, ["health_changed"])
    agent_id = register(client, auth, "Gone Agent", url="http://127.0.0.1:9/a2a")  # nothing listens there
    services.health.check_now(agent_id)  # one failure: still unknown (failures_before_down = 2)
    deliver(services)
    assert receiver.received == []
    services.health.check_now(agent_id)
    services.health.check_now(agent_id)  # down already: no change, no event
    deliver(services)
    (event,) = events_of(receiver, client.get("/.well-known/jwks.json").json)
    assert (event.type, event.subject) == (PREFIX + "health_changed", agent_id)
    assert event.data["health"] == {"state": "down", "previous": "unknown"}


def test_a_signature_state_that_changes_is_told(client, auth, follower_auth, receiver, services):
    subscribe(client, follower_auth, receiver.url, ["signature_changed"])
    key = generate_key("EdDSA")
    body = {"card": sign_card(make_card("Signed"), key), "cardUrl": "https://signed.example.com/card.json"}
    agent_id = client.post("/v1/agents", json=body, headers=auth).json["id"]
    created = client.post("/v1/keys", json={"jwks": public_jwks([key]), "agentId": agent_id}, headers=auth)
    assert created.status_code == 201
    assert client.delete(f"/v1/keys/{created.json['id']}", headers=auth).status_code == 204
    deliver(services)
    events = events_of(receiver, client.get("/.well-known/jwks.json").json)
    assert kinds(events) == [("signature_changed", agent_id)] * 2
    assert [e.data["signature"] for e in events] == [
        {"state": "verified", "previous": "unverifiable"},
        {"state": "unverifiable", "previous": "verified"},
    ]


def test_a_rolled_back_change_leaves_no_event(client, auth, services):
    register(client, auth, "Taken", tags=["x"])
    body = {"card": make_card("Taken"), "cardUrl": "https://taken.example.com/.well-known/agent-card.json"}
    assert client.post("/v1/agents", json=body, headers=auth).status_code == 409
    with services.sessions() as session:
        events = session.execute(select(ChangeEvent.type)).scalars().all()
        audit = session.scalar(select(func.count()).select_from(AuditEntry))
    assert events == [PREFIX + "registered"] and audit == 1
