"""The delivery queue: a `LeasedWork` (see `registry.jobs`) over `relay_messages`.

`claim` leases due messages of active subscriptions (normally only the head of a task is due:
in-order delivery, see `registry.relay.task_order`; the few it picks that have an earlier message
pending, e.g. two that arrived at once through two web processes, are left for later) and opens
the client's credentials. `perform` POSTs through the safe outbound client with no
transaction open. `record` writes the outcomes of the messages the worker still leases, logs
every attempt, schedules retries or dead-letters, makes the next message of each ended one's task
due, and disables a subscription whose target answered 410 Gone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, Row, bindparam, insert, select, update

from registry.db import DriverStatement, writer_lock
from registry.db.types import utcnow
from registry.jobs import LeaseColumns
from registry.relay.delivery import DeliveryOutcome, DueDelivery, WebhookPoster
from registry.relay.models import RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.retry_policy import RetryPolicy
from registry.relay.secret_box import SecretBox, SecretBoxError
from registry.relay.task_order import EARLIER_PENDING, lock_tasks, promote

M, S = RelayMessage, RelaySubscription
LEASE = LeaseColumns(M.__table__, M.__table__.c.pk, M.__table__.c.due_at, M.__table__.c.lease_owner,
                     M.__table__.c.lease_until)
# A scalar subquery, not EXISTS: PostgreSQL cannot turn it into a join, so the claim always walks
# `due_at` in order and looks each subscription up by key. As a join, an unanalysed
# relay_subscriptions (a small table autovacuum rarely analyses) made the planner drive from the
# subscriptions and read every row version of their messages.
IS_ACTIVE = select(S.status).where(S.pk == M.subscription_pk).scalar_subquery() == "active"
_WRITE = DriverStatement(update(M).where(M.pk == bindparam("b_pk")).values(
    state=bindparam("b_state"), due_at=bindparam("b_due"), attempts=bindparam("b_attempts"),
    last_attempt_at=bindparam("b_at"), last_status=bindparam("b_status"), last_error=bindparam("b_error"),
    finished_at=bindparam("b_finished"), lease_owner=None, lease_until=None,
))
MAX_TARGETS = 10_000
GONE_REASON = "the target answered 410 Gone; delivery is disabled until the owner enables it again"


# Every attempt is logged (`_attempt_row` gives these columns); nothing is read back.
_ATTEMPT_COLUMNS = ("message_pk", "attempt", "started_at", "outcome", "http_status", "latency_ms", "error", "response",
                    "next_attempt_at")
_LOG_ATTEMPTS = DriverStatement(insert(RelayAttempt), _ATTEMPT_COLUMNS)
_CLAIM = LEASE.claim_statement(where=(IS_ACTIVE,), then=(~EARLIER_PENDING,),
                               returning=(M.id, M.subscription_pk, M.body, M.attempts))


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a subscription's messages go, with the client's credentials opened."""

    url: str
    token: str | None
    authorization: str | None
    problem: str | None  # the credentials do not open: never send without them


class Targets:
    """Each subscription's target, read and opened once per worker process.

    A subscription's target URL and credentials never change (a new target is a new subscription;
    deleting one wipes its credentials, and its messages are no longer claimed, since only active
    subscriptions' messages are), and its row is never removed, so its key is never reused.
    """

    def __init__(self, engine: Engine, box: SecretBox) -> None:
        self._engine = engine
        self._box = box
        self._known: dict[int, Target] = {}
        self._lock = threading.Lock()

    def get(self, pks: set[int]) -> dict[int, Target]:
        with self._lock:
            found = {pk: self._known[pk] for pk in pks if pk in self._known}
        missing = pks - found.keys()
        if missing:
            with self._engine.connect() as conn:
                rows = conn.execute(select(S.pk, S.id, S.target_url, S.target_secrets).where(S.pk.in_(missing))).all()
            opened = {row.pk: self._opened(row) for row in rows}
            with self._lock:
                if len(self._known) + len(opened) > MAX_TARGETS:
                    self._known.clear()
                self._known.update(opened)
            found.update(opened)
        return found

    def _opened(self, row: Row[*tuple[Any, ...]]) -> Target:
        secrets: dict[str, str] = {}
        problem = None
        if row.target_secrets:
            try:
                secrets = self._box.open(row.target_secrets, row.id)
            except SecretBoxError as error:
                problem = str(error)
        return Target(row.target_url, secrets.get("token"), secrets.get("authorization"), problem)


class RelayOutbox:
    def __init__(self, engine: Engine, claims: Engine, poster: WebhookPoster, box: SecretBox, policy: RetryPolicy, *,
                 lease_seconds: float, clock: Callable[[], dt.datetime] = utcnow,
                 rng: random.Random | None = None) -> None:
        """`claims`: where claims run on PostgreSQL (`registry.db.queue_claims(engine)`)."""
        self._engine = engine
        self._claims = claims
        self._writer = writer_lock(engine)
        self._poster = poster
        self._targets = Targets(engine, box)
        self._policy = policy
        self._lease_seconds = lease_seconds
        self._clock = clock
        self._rng = rng or random.Random()

    def claim(self, owner: str, limit: int) -> list[DueDelivery]:
        params = LEASE.claim_params(owner, self._clock(), self._lease_seconds, limit)
        if self._engine.dialect.name == "sqlite":
            # Queue behind the ingress's commits on the writer lock, woken the moment it is free,
            # rather than in SQLite's busy handler, which sleeps 1, 2, 5, 10... ms between tries.
            with self._writer.hold(), self._engine.begin() as conn:
                rows = conn.execute(_CLAIM, params).all()
        else:  # one statement in autocommit: no BEGIN and COMMIT round trips
            with self._claims.connect() as conn:
                rows = conn.execute(_CLAIM, params).all()
        targets = self._targets.get({row.subscription_pk for row in rows})
        return [self._due(row, targets[row.subscription_pk]) for row in rows]

    def perform(self, item: DueDelivery) -> DeliveryOutcome:
        return self._poster.post(item)

    def record(self, owner: str, outcomes: Sequence[DeliveryOutcome]) -> int:
        now = self._clock()
        with self._writer.hold(), self._engine.begin() as conn:
            held = LEASE.hold(conn, [o.pk for o in outcomes], owner=owner, now=now, seconds=self._lease_seconds,
                              returning=(M.attempts, M.subscription_pk, M.task_key))
            kept = [o for o in outcomes if o.pk in held]
            if not kept:
                return 0
            writes = [self._message_values(o, held[o.pk], now) for o in kept]
            _WRITE.execute_many(conn, writes)
            ended = [(held[w["b_pk"]].subscription_pk, held[w["b_pk"]].task_key) for w in writes if w["b_state"] != "pending"]
            lock_tasks(conn, ended)  # only now: a replay of these tasks waits just for the promotion and commit
            promote(conn, ended, now)
            _LOG_ATTEMPTS.execute_many(conn, [_attempt_row(o, w) for o, w in zip(kept, writes, strict=True)])
            gone = {held[o.pk].subscription_pk for o in kept if o.outcome == "gone"}
            if gone:
                conn.execute(update(S).where(S.pk.in_(gone), S.status == "active")
                             .values(status="disabled", status_reason=GONE_REASON, updated_at=now))
        return len(kept)

    # -- internals ------------------------------------------------------------------------

    @staticmethod
    def _due(row: Row[*tuple[Any, ...]], target: Target) -> DueDelivery:
        return DueDelivery(row.pk, row.id, target.url, row.body, row.attempts + 1, target.token,
                           target.authorization, target.problem)

    def _message_values(self, outcome: DeliveryOutcome, held: Row[*tuple[Any, ...]], now: dt.datetime) -> dict[str, Any]:
        attempts = held.attempts + 1
        values = {"b_pk": outcome.pk, "b_attempts": attempts, "b_at": outcome.started_at,
                  "b_status": outcome.http_status, "b_error": outcome.error, "b_due": None, "b_finished": now}
        if outcome.outcome == "delivered":
            return {**values, "b_state": "delivered"}
        delay = None if outcome.outcome == "gone" else self._policy.next_delay(attempts, outcome.retry_after, self._rng)
        if delay is None:
            return {**values, "b_state": "dead"}
        return {**values, "b_state": "pending", "b_due": now + dt.timedelta(seconds=delay), "b_finished": None}


def _attempt_row(outcome: DeliveryOutcome, write: dict[str, Any]) -> dict[str, Any]:
    return {  # the keys of _ATTEMPT_COLUMNS
        "message_pk": outcome.pk, "attempt": write["b_attempts"], "started_at": outcome.started_at,
        "outcome": outcome.outcome, "http_status": outcome.http_status, "latency_ms": outcome.latency_ms,
        "error": outcome.error, "response": outcome.response, "next_attempt_at": write["b_due"],
    }
