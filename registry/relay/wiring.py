"""Building the relay's services from the settings (called once by `registry.container`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.models.types import utcnow
from registry.outbound import OutboundError, OutboundPolicy, SafeHttpClient
from registry.relay.agent_jwt import AgentJwtVerifier, card_origin_resolvers
from registry.relay.delivery import WebhookPoster
from registry.relay.ingress import PG_CHANNEL, RelayIngress
from registry.relay.job import RelayDeliveryJob
from registry.relay.operations import RelayOperations
from registry.relay.outbox import RelayOutbox
from registry.relay.rate_limit import RateLimiter
from registry.relay.retry_policy import RetryPolicy
from registry.relay.secret_box import SecretBox
from registry.relay.subscriptions import SubscriptionService
from registry.relay.wakeup import ChangeWatcher, RelayWakeup, change_watcher
from registry.relay.webhook_signer import Ed25519WebhookSigner
from registry.settings import Settings
from signing import JwksFetchError, SigningKey, UnsafeHttpLoopback

MAX_RESPONSE_BYTES = 65_536
MAX_JWKS_BYTES = 262_144
JWKS_TIMEOUT = 5.0


@dataclasses.dataclass
class RelayServices:
    subscriptions: SubscriptionService
    ingress: RelayIngress
    outbox: RelayOutbox
    operations: RelayOperations
    wakeup: RelayWakeup
    http: SafeHttpClient
    jwks: Callable[[], dict[str, Any]]  # the public keys receivers verify `webhook-signature` with
    watcher: Callable[[], ChangeWatcher | None]

    def delivery_job(self, settings: Settings) -> RelayDeliveryJob:
        relay = settings.relay
        return RelayDeliveryJob(relay.tick, self.outbox, self.wakeup, batch=relay.batch, watcher=self.watcher)

    def close(self) -> None:
        self.http.close()


def relay_policy(settings: Settings) -> OutboundPolicy:
    relay = settings.relay
    return OutboundPolicy(
        allow_http=settings.allow_http, allowed_networks=settings.allowed_networks,
        connect_timeout=relay.connect_timeout, read_timeout=relay.timeout, total_timeout=relay.timeout,
        max_response_bytes=MAX_RESPONSE_BYTES, max_redirects=0,
        pool_maxsize=max(16, settings.worker.threads),  # one kept-alive connection per delivering thread
    )


def build_relay(settings: Settings, engine: Engine, sessions: sessionmaker[Session], *, jwks_fetch: Callable[[str], bytes],
                webhook_key: Callable[[], SigningKey], jwks: Callable[[], dict[str, Any]],
                clock: Callable[[], dt.datetime] = utcnow, monotonic: Callable[[], float] = time.monotonic,
                rng: random.Random | None = None) -> RelayServices:
    """`webhook_key` returns the registry's active Ed25519 key, `jwks` the document that publishes it."""
    relay = settings.relay
    http = SafeHttpClient(relay_policy(settings))
    box = SecretBox(settings.secret_key)
    policy = RetryPolicy(relay.retry_schedule, relay.jitter, relay.max_retry_after)
    rng = rng or random.Random()
    wakeup = RelayWakeup()
    # http JWKS are possible only on loopback, and only when the operator allows http at all (tests).
    unsafe = UnsafeHttpLoopback() if settings.allow_http else None
    verifier = AgentJwtVerifier(card_origin_resolvers(jwks_fetch, unsafe=unsafe), max_age=relay.jwt_max_age,
                                clock=clock)
    subscriptions = SubscriptionService(sessions, http, box, token_grace=relay.token_grace, clock=clock)
    poster = WebhookPoster(http, Ed25519WebhookSigner(webhook_key), timeout=relay.timeout,
                           max_response_bytes=MAX_RESPONSE_BYTES, clock=clock, monotonic=monotonic)
    in_memory = ":memory:" in settings.database_url
    return RelayServices(
        subscriptions=subscriptions,
        ingress=RelayIngress(engine, verifier, RateLimiter(relay.rate, relay.burst, monotonic=monotonic),
                             first_delay=lambda: policy.first_delay(rng), on_commit=wakeup.notify, clock=clock),
        outbox=RelayOutbox(engine, poster, box, policy, lease_seconds=relay.lease_seconds, clock=clock, rng=rng),
        operations=RelayOperations(engine, subscriptions, retention=relay.retention, clock=clock,
                                   on_replay=wakeup.notify),
        wakeup=wakeup,
        http=http,
        jwks=jwks,
        watcher=lambda: None if in_memory else change_watcher(engine, wakeup, poll=relay.poll, channel=PG_CHANNEL),
    )


def safe_jwks_fetch(http: SafeHttpClient) -> Callable[[str], bytes]:
    """A `signing.JwksFetcher` over the safe outbound client; redirects are never followed (a JWKS
    is trusted for its origin only)."""

    def fetch(url: str) -> bytes:
        try:
            response = http.get(url, headers={"Accept": "application/jwk-set+json, application/json"},
                                max_bytes=MAX_JWKS_BYTES, timeout=JWKS_TIMEOUT, follow_redirects=False)
        except OutboundError as error:
            raise JwksFetchError(f"JWKS {url} could not be fetched: {error}") from error
        if response.status != 200:
            raise JwksFetchError(f"JWKS {url} answered HTTP {response.status}")
        return response.body

    return fetch
