"""Delivery by the relay's engine on a clock the test moves: filters by tag and owner, order per
agent while a message is retried, dead letters and replays (same event id, same webhook-id)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest

from registry.container import Services
from registry.db import queue_claims
from registry.events import build_events
from registry.outbound import SafeHttpClient
from registry.relay import build_relay, relay_policy
from registry.settings import RelaySettings
from tests.registry.events.conftest import deliver, events_of, register, subscribe
from tests.support.jobs import FakeClock, Ticker
from tests.support.webhooks import Received

PREFIX = "io.agentdex.agent."


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def timed(services: Services, clock: FakeClock) -> Iterator[Services]:
    """The relay and the fan-out on the test's clock, with a short retry schedule and no jitter."""
    relay_settings = RelaySettings(retry_schedule=(0.0, 5.0, 300.0), jitter=0.0, timeout=1.0, connect_timeout=1.0)
    settings = dataclasses.replace(services.settings, relay=relay_settings)
    relay = build_relay(
        settings,
        services.engine,
        services.sessions,
        http=SafeHttpClient(relay_policy(settings)),
        claims=queue_claims(services.engine),
        key_sources=lambda *_: [],  # type: ignore[arg-type,return-value]  # nothing is pushed here
        webhook_key=lambda: services.registry_keys.active("EdDSA"),
        clock=clock,
        monotonic=Ticker(),
        rng=random.Random(7),
    )
    original = services.relay, services.events
    services.relay, services.events = (
        relay,
        build_events(settings, services.engine, services.sessions, relay, clock=clock),
    )
    yield services
    services.relay, services.events = original
    relay.close()


def jwks(client: Any) -> dict[str, Any]:
    return dict(client.get("/.well-known/jwks.json").json)


def test_filters_pick_agents_by_tag_and_owner(client, auth, other_token, follower_auth, timed):
    from tests.support.webhooks import WebhookReceiver

    receivers = [WebhookReceiver() for _ in range(3)]
    try:
        subscribe(client, follower_auth, receivers[0].url, ["registered"], filter={"tags": ["Weather", "maps"]})
        subscribe(client, follower_auth, receivers[1].url, ["registered"], filter={"owner": "bob"})
        subscribe(client, follower_auth, receivers[2].url, ["registered"], filter={"owner": "bob", "tags": ["weather"]})
        bob = {"Authorization": f"Bearer {other_token}"}
        alice_weather = register(client, auth, "Alice Weather", tags=["WEATHER"])
        alice_maps = register(client, auth, "Alice Maps", tags=["maps"])
        register(client, auth, "Alice Finance", tags=["finance"])
        bob_weather = register(client, bob, "Bob Weather", tags=["weather"])
        bob_finance = register(client, bob, "Bob Finance", tags=["finance"])
        deliver(timed)
        keys = jwks(client)
        got = [sorted(e.subject for e in events_of(r, keys)) for r in receivers]
        assert got == [
            sorted([alice_weather, alice_maps, bob_weather]),
            sorted([bob_weather, bob_finance]),
            [bob_weather],
        ]
        assert {e.data["owner"] for e in events_of(receivers[1], keys)} == {"bob"}
    finally:
        for receiver in receivers:
            receiver.close()


def test_an_agents_events_wait_behind_one_being_retried(client, auth, follower_auth, receiver, timed, clock):
    subscribe(client, follower_auth, receiver.url, ["registered", "updated", "deprecated"])
    slow = register(client, auth, "Slow Agent")
    other = register(client, auth, "Other Agent")
    for status in ("deprecated", "active"):
        client.patch(f"/v1/agents/{slow}", json={"status": status}, headers=auth)
        client.patch(f"/v1/agents/{other}", json={"status": status}, headers=auth)
    failing = {"left": 1}

    def first_of_slow_fails(got: Received) -> tuple[int, dict[str, str], bytes] | None:
        if slow.encode() in got.body and failing["left"]:
            failing["left"] -= 1
            return (503, {"Retry-After": "5"}, b"busy")
        return None

    receiver.rule = first_of_slow_fails
    deliver(timed)
    keys = jwks(client)
    first = events_of(receiver, keys)
    assert [e.type for e in first if e.subject == slow] == [PREFIX + "registered"]  # failed: the next ones wait
    assert [e.type for e in first if e.subject == other] == [
        PREFIX + t for t in ("registered", "deprecated", "updated")
    ]
    clock.advance(5)
    deliver(timed)
    events = events_of(receiver, keys)
    slow_events = [e for e in events if e.subject == slow]
    assert [e.type for e in slow_events] == [PREFIX + t for t in ("registered", "registered", "deprecated", "updated")]
    assert slow_events[0].id == slow_events[1].id  # the retry: the same event id and webhook-id
    assert slow_events[0].received.webhook_id == slow_events[1].received.webhook_id


def test_dead_letters_are_replayed_and_so_is_one_delivery(client, auth, follower_auth, receiver, timed, clock):
    sub = subscribe(client, follower_auth, receiver.url, ["registered"])
    receiver.default = (500, {}, b"down")
    agent_id = register(client, auth, "Unlucky")
    deliver(timed)
    for seconds in (5, 300):
        clock.advance(seconds)
        deliver(timed)
    path = f"/v1/events/subscriptions/{sub['id']}"
    (dead,) = client.get(f"{path}/messages?state=dead", headers=follower_auth).json["items"]
    assert (dead["agentId"], dead["attempts"], dead["kind"]) == (agent_id, 3, "cloudevent")

    receiver.default = (200, {}, b"ok")
    since = {"since": dead["receivedAt"]}  # dead-lettered at or after it
    assert client.post(f"{path}/replay", json=since, headers=follower_auth).json == {
        "subscriptionId": sub["id"],
        "replayed": 1,
    }
    deliver(timed)
    replay = client.post(f"{path}/messages/{dead['id']}/replay", headers=follower_auth)
    assert replay.status_code == 200 and replay.json["agentId"] == agent_id
    deliver(timed)
    events = events_of(receiver, jwks(client))  # 3 failed attempts, the replayed dead letter, one more replay
    assert len(events) == 5 and len({(e.id, e.received.webhook_id) for e in events}) == 1
    assert client.post(f"{path}/messages/msg_unknown/replay", headers=follower_auth).status_code == 404
