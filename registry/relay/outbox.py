"""The delivery queue, a `LeasedWork` (`registry.jobs`) over `relay_messages`: `claim` leases due
messages of active subscriptions, `perform` POSTs with no transaction open, `record` writes the
outcomes the worker still leases, logs each attempt, schedules retries or dead-letters, makes the
next message of each ended task due, and disables a subscription whose target answered 410.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, Row, bindparam, insert, select, update

from registry.db import DriverStatement, writer_lock
from registry.db.types import utcnow
from registry.jobs import LeaseColumns
from registry.metrics import NULL_METRICS, Metrics
from registry.relay.delivery import DeliveryOutcome, DueDelivery, RetryPolicy, Target, WebhookPoster
from registry.relay.models import RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.secret_box import SecretBox, SecretBoxError
from registry.relay.task_order import EARLIER_PENDING, lock_tasks, promote

M, S, T = RelayMessage, RelaySubscription, RelayMessage.__table__
LEASE = LeaseColumns(T, T.c.pk, T.c.due_at, T.c.lease_owner, T.c.lease_until)
# A scalar subquery, not a join: the claim then always walks `due_at` in order, whatever the
# (rarely analysed) statistics of relay_subscriptions say.
IS_ACTIVE = select(S.status).where(S.pk == M.subscription_pk).scalar_subquery() == "active"
_CLAIM = LEASE.claim_statement(
    where=(IS_ACTIVE,), then=(~EARLIER_PENDING,), returning=(M.id, M.subscription_pk, M.body, M.attempts, M.kind)
)
# A message's media type by its kind: a change event goes as a structured-mode CloudEvent.
CONTENT_TYPES = {"cloudevent": "application/cloudevents+json"}
# SET, besides the lease, the columns each row gives (`_message_values`, keys prefixed "b_").
_OUTCOME_COLUMNS = ("state", "due_at", "attempts", "last_attempt_at", "last_status", "last_error", "finished_at")
_WRITE = DriverStatement(
    update(M)
    .where(M.pk == bindparam("b_pk"))
    .values(lease_owner=None, lease_until=None, **{name: bindparam(f"b_{name}") for name in _OUTCOME_COLUMNS})
)
_HELD = (M.attempts, M.subscription_pk, M.task_key)
_ATTEMPT_FIELDS = ("outcome", "started_at", "http_status", "latency_ms", "error", "response")  # of DeliveryOutcome
# Every attempt is logged (`_attempt_row` gives these columns); nothing is read back.
_LOG_ATTEMPT = DriverStatement(insert(RelayAttempt), (*_ATTEMPT_FIELDS, "message_pk", "attempt", "next_attempt_at"))
MAX_TARGETS = 10_000
GONE_REASON = "the target answered 410 Gone; delivery is disabled until the owner enables it again"


class RelayOutbox:
    def __init__(
        self,
        engine: Engine,
        claims: Engine,
        poster: WebhookPoster,
        box: SecretBox,
        policy: RetryPolicy,
        *,
        lease_seconds: float,
        clock: Callable[[], dt.datetime] = utcnow,
        rng: random.Random | None = None,
        metrics: Metrics = NULL_METRICS,
    ) -> None:
        """`claims`: where claims run on PostgreSQL (`registry.db.queue_claims(engine)`)."""
        self._engine = engine
        self._claims = claims
        self._writer = writer_lock(engine)
        self._poster = poster
        self._box = box
        self._targets: dict[int, Target] = {}  # see `_targets_of`
        self._targets_lock = threading.Lock()
        self._policy = policy
        self._lease_seconds = lease_seconds
        self._clock = clock
        self._rng = rng or random.Random()
        self._metrics = metrics

    def claim(self, owner: str, limit: int) -> list[DueDelivery]:
        params = LEASE.claim_params(owner, self._clock(), self._lease_seconds, limit)
        if self._engine.dialect.name == "sqlite":
            # Queue behind the ingress's commits on the writer lock rather than in SQLite's busy handler,
            # which sleeps 1, 2, 5, 10... ms between tries.
            with self._writer.hold(), self._engine.begin() as conn:
                rows = conn.execute(_CLAIM, params).all()
        else:  # one statement, in autocommit
            with self._claims.connect() as conn:
                rows = conn.execute(_CLAIM, params).all()
        targets = self._targets_of({row.subscription_pk for row in rows})
        return [
            DueDelivery(
                row.pk, row.id, row.body, row.attempts + 1, targets[row.subscription_pk], _content_type(row.kind)
            )
            for row in rows
        ]

    def perform(self, item: DueDelivery) -> DeliveryOutcome:
        return self._poster.post(item)

    def record(self, owner: str, outcomes: Sequence[DeliveryOutcome]) -> int:
        now = self._clock()
        with self._writer.hold(), self._engine.begin() as conn:
            keys = [o.pk for o in outcomes]
            held = LEASE.hold(conn, keys, owner=owner, now=now, seconds=self._lease_seconds, returning=_HELD)
            kept = [o for o in outcomes if o.pk in held]
            if not kept:
                return 0
            writes = [self._message_values(o, held[o.pk].attempts + 1, now) for o in kept]
            _WRITE.execute_many(
                conn, [{"b_pk": w["b_pk"], **{f"b_{n}": w[n] for n in _OUTCOME_COLUMNS}} for w in writes]
            )
            ended = [
                (held[w["b_pk"]].subscription_pk, held[w["b_pk"]].task_key) for w in writes if w["state"] != "pending"
            ]
            lock_tasks(conn, ended)  # only now: a replay of these tasks waits just for the promotion and commit
            promote(conn, ended, now)
            _LOG_ATTEMPT.execute_many(conn, [_attempt_row(o, w) for o, w in zip(kept, writes, strict=True)])
            if gone := {held[o.pk].subscription_pk for o in kept if o.outcome == "gone"}:
                disable = update(S).where(S.pk.in_(gone), S.status == "active")
                conn.execute(disable.values(status="disabled", status_reason=GONE_REASON, updated_at=now))
        for outcome, write in zip(kept, writes, strict=True):  # committed: count what each attempt did
            seconds = None if outcome.latency_ms is None else outcome.latency_ms / 1000
            self._metrics.relay_attempt(write["state"], seconds)
        return len(kept)

    def _targets_of(self, pks: set[int]) -> dict[int, Target]:
        """Each subscription's target is read and opened once per process: its target and credentials
        never change (a new target is a new subscription), and its key is never reused."""
        with self._targets_lock:
            found = {pk: self._targets[pk] for pk in pks if pk in self._targets}
        if missing := pks - found.keys():
            with self._engine.connect() as conn:
                rows = conn.execute(select(S.pk, S.id, S.target_url, S.target_secrets).where(S.pk.in_(missing)))
                opened = {row.pk: self._opened(row) for row in rows}
            with self._targets_lock:
                if len(self._targets) + len(opened) > MAX_TARGETS:
                    self._targets.clear()
                self._targets.update(opened)
            found.update(opened)
        return found

    def _opened(self, row: Row[*tuple[Any, ...]]) -> Target:
        try:
            secrets = self._box.open(row.target_secrets, row.id) if row.target_secrets else {}
        except SecretBoxError as error:
            return Target(row.target_url, None, None, str(error))
        return Target(row.target_url, secrets.get("token"), secrets.get("authorization"), None)

    def _message_values(self, outcome: DeliveryOutcome, attempts: int, now: dt.datetime) -> dict[str, Any]:
        values = {"b_pk": outcome.pk, "attempts": attempts, "last_attempt_at": outcome.started_at, "due_at": None}
        values |= {"last_status": outcome.http_status, "last_error": outcome.error, "finished_at": now}
        if outcome.outcome == "delivered":
            return values | {"state": "delivered"}
        delay = None if outcome.outcome == "gone" else self._policy.next_delay(attempts, outcome.retry_after, self._rng)
        if delay is None:
            return values | {"state": "dead"}
        return values | {"state": "pending", "due_at": now + dt.timedelta(seconds=delay), "finished_at": None}


def _attempt_row(outcome: DeliveryOutcome, write: dict[str, Any]) -> dict[str, Any]:
    row = {name: getattr(outcome, name) for name in _ATTEMPT_FIELDS}
    return row | {"message_pk": outcome.pk, "attempt": write["attempts"], "next_attempt_at": write["due_at"]}


def _content_type(kind: str) -> str:
    return CONTENT_TYPES.get(kind, "application/json")
