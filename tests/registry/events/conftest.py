"""Fixtures of the change-event tests: a follower's token, its webhook receiver on loopback, and
running the fan-out and the relay's delivery as a worker does. Deliveries are parsed as a
subscriber would: the CloudEvents SDK reads them, the Standard Webhooks signature is checked
against the registry's JWKS."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from cloudevents.core.bindings.http import HTTPMessage, from_http_event

from registry.container import Services
from registry.relay.job import RelayDeliveryJob
from tests.support.cards import make_card
from tests.support.jobs import run_job
from tests.support.webhooks import Received, WebhookReceiver, verify_webhook


@dataclasses.dataclass(frozen=True)
class Delivered:
    """One delivery as the subscriber sees it."""

    type: str
    subject: str
    id: str
    data: dict[str, Any]
    attributes: dict[str, Any]
    received: Received


@pytest.fixture
def follower_auth(services: Services) -> dict[str, str]:
    """A token with no scope that matters here: following the catalog needs none."""
    return {"Authorization": f"Bearer {services.tokens.create('follower', ['metrics:read']).token}"}


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    server = WebhookReceiver()
    yield server
    server.close()


def subscribe(client: Any, auth: dict[str, str], target: str, types: list[str], **fields: Any) -> dict[str, Any]:
    response = client.post(
        "/v1/events/subscriptions", json={"targetUrl": target, "types": types, **fields}, headers=auth
    )
    assert response.status_code == 201, response.json
    return dict(response.json)


def register(client: Any, auth: dict[str, str], name: str, **card: Any) -> str:
    slug = name.lower().replace(" ", "-")
    body = {"card": make_card(name, **card), "cardUrl": f"https://{slug}.example.com/.well-known/agent-card.json"}
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def deliver(services: Services) -> int:
    """Fan the outbox out and deliver everything due, as a worker's two jobs do; events fanned out."""
    fanned = services.events.fanout.run()
    relay = services.relay
    while run_job(RelayDeliveryJob(1.0, relay.outbox, relay.wakeup, batch=64, dispatcher=False)).claimed:
        pass
    return fanned


def parsed(received: Received) -> Delivered:
    event = from_http_event(HTTPMessage(received.headers, received.body))
    data = event.get_data()
    assert isinstance(data, dict)
    return Delivered(
        event.get_type(), event.get_subject() or "", event.get_id(), data, event.get_attributes(), received
    )


def events_of(receiver: WebhookReceiver, jwks: dict[str, Any]) -> list[Delivered]:
    """Every delivery so far, each checked as a subscriber would (signature first)."""
    got = list(receiver.received)
    assert all(verify_webhook(r, jwks) for r in got), "a delivery's webhook-signature does not verify"
    return [parsed(r) for r in got]
