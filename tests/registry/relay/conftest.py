"""Fixtures of the relay tests: a client with the `relay` scope, agents that push, the client's
webhook receiver, and relay services on a clock the test moves."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest

from registry.container import Services, jwks_fetcher, key_policy
from registry.db import queue_claims
from registry.outbound import SafeHttpClient
from registry.relay import build_relay, card_key_sources, relay_policy
from registry.settings import RelaySettings
from signing import UnsafeHttpAnyHost
from tests.support.cards import make_card
from tests.support.jobs import FakeClock, Ticker
from tests.support.webhooks import WebhookReceiver

CARD_PATH = "/.well-known/agent-card.json"


@pytest.fixture
def relay_settings() -> RelaySettings:
    """Fast, deterministic timing: short timeouts, no jitter, a short schedule."""
    return RelaySettings(
        retry_schedule=(0.0, 5.0, 300.0),
        jitter=0.0,
        timeout=1.0,
        connect_timeout=1.0,
        lease_seconds=30.0,
        rate=5.0,
        burst=5,
        token_grace=600.0,
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ticker() -> Ticker:
    return Ticker()


@pytest.fixture
def relay(services: Services, relay_settings: RelaySettings, clock: FakeClock, ticker: Ticker) -> Iterator[Any]:
    """The relay rebuilt on the test's clocks and settings, swapped into the services the app uses."""
    settings = dataclasses.replace(services.settings, relay=relay_settings)
    policy = key_policy(settings, services.http, services.trust.owner_keys)
    key_sources = card_key_sources(policy, jwks_fetcher(settings, services.http), unsafe=UnsafeHttpAnyHost())
    rebuilt = build_relay(
        settings,
        services.engine,
        services.sessions,
        http=SafeHttpClient(relay_policy(settings)),
        claims=queue_claims(services.engine),
        key_sources=key_sources,
        webhook_key=lambda: services.registry_keys.active("EdDSA"),
        clock=clock,
        monotonic=ticker,
        rng=random.Random(7),
    )
    original, services.relay = services.relay, rebuilt
    services.settings = settings
    yield rebuilt
    services.relay = original
    rebuilt.close()


@pytest.fixture
def relay_auth(services: Services) -> dict[str, str]:
    return {"Authorization": f"Bearer {services.tokens.create('client', ['relay']).token}"}


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    server = WebhookReceiver()
    yield server
    server.close()


def register_agent(
    client: Any,
    auth: dict[str, str],
    base_url: str = "https://push.example.com",
    *,
    push: bool = True,
    name: str = "Pusher",
) -> str:
    """Upload a card (nothing is fetched); `base_url` is the agent's origin, where its JWKS would be."""
    card = make_card(name, url=f"{base_url}/a2a", push=push)
    response = client.post(
        "/v1/agents", json={"card": card, "cardUrl": f"{base_url}/{name.lower()}{CARD_PATH}"}, headers=auth
    )
    assert response.status_code == 201, response.json
    return str(response.json["id"])


@pytest.fixture
def push_agent(client: Any, auth: dict[str, str]) -> str:
    return register_agent(client, auth)


def subscribe(client: Any, relay_auth: dict[str, str], agent_id: str, target: str, **fields: Any) -> dict[str, Any]:
    response = client.post(
        "/v1/relay/subscriptions", json={"agentId": agent_id, "targetUrl": target, **fields}, headers=relay_auth
    )
    assert response.status_code == 201, response.json
    return dict(response.json)


def push(
    client: Any,
    subscription: dict[str, Any],
    body: Any,
    *,
    token: str | None = None,
    header: str = "X-A2A-Notification-Token",
    **headers: str,
) -> Any:
    """POST a notification to the relay as an agent would."""
    secret = subscription["relayToken"] if token is None else token
    value = f"Bearer {secret}" if header == "Authorization" else secret
    path = subscription["relayUrl"].split("://", 1)[1].split("/", 1)[1]
    return client.post("/" + path, json=body, headers={header: value, **headers})


def status_update(task_id: str, state: str = "TASK_STATE_WORKING") -> dict[str, Any]:
    """A v1.0 StreamResponse with a TaskStatusUpdateEvent."""
    return {"statusUpdate": {"taskId": task_id, "contextId": "ctx-1", "status": {"state": state}}}
