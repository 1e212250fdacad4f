"""Building the relay's services from the settings (called once by `registry.container`, which
also builds, and closes, the relay's HTTP client and its claim pool)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import random
import time
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.db.types import utcnow
from registry.metrics import NULL_METRICS, Metrics
from registry.outbound import OutboundPolicy, SafeHttpClient
from registry.relay.agent_jwt import AgentJwtVerifier, ResolverFactory
from registry.relay.delivery import RetryPolicy, WebhookPoster
from registry.relay.ingress import PG_CHANNEL, RateLimiter, RelayIngress
from registry.relay.job import ChangeWatcher, RelayDeliveryJob, RelayWakeup, change_watcher
from registry.relay.operations import RelayOperations
from registry.relay.outbox import RelayOutbox
from registry.relay.secret_box import SecretBox
from registry.relay.subscriptions import SubscriptionService
from registry.settings import Settings
from signing import SigningKey

MAX_RESPONSE_BYTES = 65_536


@dataclasses.dataclass
class RelayServices:
    """The relay's services, with the HTTP client and claim engine the container built for them."""

    subscriptions: SubscriptionService
    ingress: RelayIngress
    outbox: RelayOutbox
    operations: RelayOperations
    wakeup: RelayWakeup
    watcher: Callable[[], ChangeWatcher | None]
    http: SafeHttpClient
    claims: Engine | None  # the claims' own pool (PostgreSQL), else None: they run on the engine

    def delivery_job(self, settings: Settings) -> RelayDeliveryJob:
        relay = settings.relay
        return RelayDeliveryJob(relay.tick, self.outbox, self.wakeup, batch=relay.batch, watcher=self.watcher)

    def close(self) -> None:
        """The container's `Services.close` ends here the lifetimes it started for the relay."""
        self.http.close()
        if self.claims is not None:
            self.claims.dispose()


def relay_policy(settings: Settings) -> OutboundPolicy:
    """The relay's own outbound policy: short timeouts, small answers, no redirects."""
    relay = settings.relay
    return OutboundPolicy(
        allow_http=settings.allow_http,
        allowed_networks=settings.allowed_networks,
        connect_timeout=relay.connect_timeout,
        read_timeout=relay.timeout,
        total_timeout=relay.timeout,
        max_response_bytes=MAX_RESPONSE_BYTES,
        max_redirects=0,
        pool_maxsize=max(16, settings.worker.threads),  # one kept-alive connection per delivering thread
    )


def build_relay(
    settings: Settings,
    engine: Engine,
    sessions: sessionmaker[Session],
    *,
    http: SafeHttpClient,
    claims: Engine,
    key_sources: ResolverFactory,
    webhook_key: Callable[[], SigningKey],
    metrics: Metrics = NULL_METRICS,
    clock: Callable[[], dt.datetime] = utcnow,
    monotonic: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
) -> RelayServices:
    """`http`: a client with `relay_policy`; `claims`: where the outbox's claims run
    (`registry.db.queue_claims(engine)`); `key_sources` finds the keys bound to an agent's card
    (JWT mode); `webhook_key` returns the registry's active Ed25519 key (published in its JWKS)."""
    relay, rng, wakeup = settings.relay, rng or random.Random(), RelayWakeup()
    box = SecretBox(settings.secret_key)
    policy = RetryPolicy(relay.retry_schedule, relay.jitter, relay.max_retry_after)
    verifier = AgentJwtVerifier(key_sources, max_age=relay.jwt_max_age, clock=clock)
    limiter = RateLimiter(relay.rate, relay.burst, monotonic=monotonic)
    first_delay = functools.partial(policy.first_delay, rng)
    accepted = _accepted(wakeup, metrics)
    ingress = RelayIngress(
        engine, verifier, limiter, first_delay=first_delay, on_commit=accepted, clock=clock, monotonic=monotonic
    )
    grace = relay.token_grace
    subscriptions = SubscriptionService(sessions, http, box, token_grace=grace, clock=clock, on_change=ingress.forget)
    poster = WebhookPoster(http, webhook_key, clock=clock, monotonic=monotonic)
    in_memory = ":memory:" in settings.database_url
    return RelayServices(
        subscriptions=subscriptions,
        ingress=ingress,
        outbox=RelayOutbox(
            engine,
            claims,
            poster,
            box,
            policy,
            lease_seconds=relay.lease_seconds,
            clock=clock,
            rng=rng,
            metrics=metrics,
        ),
        operations=RelayOperations(
            engine, subscriptions, retention=relay.retention, clock=clock, on_replay=wakeup.notify
        ),
        wakeup=wakeup,
        watcher=lambda: None if in_memory else change_watcher(engine, wakeup, poll=relay.poll, channel=PG_CHANNEL),
        http=http,
        claims=claims if claims is not engine else None,
    )


def _accepted(wakeup: RelayWakeup, metrics: Metrics) -> Callable[[], None]:
    """Once a notification is committed: count it, and wake the delivery job."""

    def committed() -> None:
        metrics.relay_accepted()
        wakeup.notify()

    return committed
