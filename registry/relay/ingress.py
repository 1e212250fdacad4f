"""The relay ingress: authenticate an agent's notification, check it, and commit it to the outbox.

The 202 comes only once the message is committed; notifications that arrive together share one
transaction (`GroupCommitter`). Checks, in order: subscription (404), credentials (401), rate (429),
body (422), task (409), JWT replay (409).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from sqlalchemy import Engine, Row, bindparam, func, insert, select
from sqlalchemy.exc import IntegrityError

from registry import errors
from registry.db import DriverStatement, writer_lock
from registry.db.group_commit import GroupCommitter
from registry.db.types import utcnow
from registry.relay.agent_jwt import AgentBinding, AgentJwtVerifier
from registry.relay.bodies import classify
from registry.relay.catalog_tables import AGENTS
from registry.relay.errors import ReplayedNotification, TaskMismatch
from registry.relay.models import RelayMessage, RelaySubscription
from registry.relay.subscriptions import TokenHashes
from registry.relay.task_order import waiting_or_due
from registry.request_input import parse_json

PG_CHANNEL = "agentdex_relay"  # notified by the trigger `relay_messages_notify` (the baseline migration)
MAX_CACHED = 10_000
MAX_BUCKETS = 100_000
S, M = RelaySubscription, RelayMessage
SubscriptionRow = Row[*tuple[Any, ...]]

_TOKENS = (S.token_hash, S.previous_token_hash, S.previous_token_until)
# Nothing is pushed to a subscription the registry feeds itself (another kind).
_SUBSCRIPTION = select(S.pk, S.status, S.task_id, S.auth_mode, S.agent_pk, *_TOKENS).where(
    S.id == bindparam("b_id"), S.kind == "push"
)
A = AGENTS.c
_AGENT = select(A.pk, A.card_url, A.owner_id, A.jwks_url).where(A.pk == bindparam("b_pk"))
_JTI = select(M.pk).where(M.subscription_pk == bindparam("b_subscription_pk"), M.jti == bindparam("b_jti"))
# A message's place in its task's order. SQLite has one writer, so the task's next number is read
# under its lock; on PostgreSQL two web processes could read the same one, so it comes from a
# sequence (numbers taken out of commit order only ever order messages that arrived together).
ORDER_SEQUENCE = "relay_message_order"
_TASK_NEXT = (
    select(func.coalesce(func.max(M.seq), 0) + 1)
    .where(M.subscription_pk == bindparam("b_subscription_pk"), M.task_key == bindparam("b_task_key"))
    .scalar_subquery()
)
_DUE = waiting_or_due(bindparam("b_subscription_pk"), bindparam("b_task_key"), bindparam("b_due", type_=M.due_at.type))
_GIVEN = ("id", "subscription_pk", "task_key", "kind", "body", "jti", "received_at")  # bound as b_<column>


def message_insert(dialect: str) -> Any:
    """A message into the outbox, in its task's order, due at `b_due` unless its task has one pending
    (parameters `b_<column>` of `_GIVEN`, and `b_due`). Executed once per row (no RETURNING, so no
    multi-row VALUES): each row sees those before it. Also used by `registry.events`."""
    seq = func.nextval(ORDER_SEQUENCE) if dialect == "postgresql" else _TASK_NEXT
    values: dict[str, Any] = {column: bindparam(f"b_{column}") for column in _GIVEN}
    values |= {"seq": seq, "state": "pending", "due_at": _DUE, "attempts": 0, "replays": 0}
    return insert(M).inline().values(values)  # inline(): nothing is read back (no RETURNING pk)


@dataclasses.dataclass(frozen=True)
class Notification:
    """One POST to `/relay/{subscription_id}` as the API layer read it."""

    subscription_id: str
    body: bytes
    tokens: tuple[str, ...]  # secrets presented in X-A2A-Notification-Token, A2A-Notification-Token, Bearer
    authorization: str | None
    audience: Callable[[], str]  # the relay URL the agent was given (JWT `aud`), built only when needed


@dataclasses.dataclass(frozen=True)
class Accepted:
    message_id: str
    subscription_id: str
    task_id: str | None
    kind: str


class RateLimiter:
    """A token bucket per key, in this process: `rate` per second on average, bursts of `burst`. N
    web processes admit N x the rate: it protects the outbox from a runaway agent, it is no meter."""

    def __init__(self, rate: float, burst: int, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._monotonic = monotonic
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def admit(self, key: Hashable) -> float:
        """0 when admitted, else how many seconds until one more notification would be."""
        now = self._monotonic()
        with self._lock:
            tokens, at = self._buckets.get(key, (self._burst, now))
            tokens = min(self._burst, tokens + (now - at) * self._rate)
            if len(self._buckets) >= MAX_BUCKETS and key not in self._buckets:
                self._buckets.clear()  # forgetting buckets only ever admits more, never less
            self._buckets[key] = (tokens - 1 if tokens >= 1 else tokens, now)
        return 0.0 if tokens >= 1 else (1 - tokens) / self._rate


class RelayIngress:
    def __init__(
        self,
        engine: Engine,
        jwt: AgentJwtVerifier,
        limiter: RateLimiter,
        *,
        first_delay: Callable[[], float] = lambda: 0.0,
        on_commit: Callable[[], None] = lambda: None,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._jwt = jwt
        self._limiter = limiter
        self._first_delay = first_delay
        self._on_commit = on_commit
        self._clock = clock
        self._monotonic = monotonic
        # Every notification needs its subscription's row: it is kept for a second in this process, so
        # deleting or disabling one in another process takes effect here up to a second later (a
        # message accepted meanwhile is dead-lettered by the prune job). A rotation counts at once: a
        # token the cached row refuses is checked again against a fresh read.
        self._cached: dict[str, tuple[float, SubscriptionRow]] = {}
        self._insert = DriverStatement(message_insert(engine.dialect.name))
        self._committer = GroupCommitter(
            self._write_batch, self._write_one, max_batch=128, serialize=writer_lock(engine).hold
        )

    def forget(self, sub_id: str) -> None:
        """The subscription changed (deleted, disabled, rotated): read it afresh next time."""
        self._cached.pop(sub_id, None)

    def accept(self, notification: Notification) -> Accepted:
        """Raises NotFound, Unauthorized, TooManyRequests, InvalidNotification, TaskMismatch, ReplayedNotification."""
        with self._committer.expecting():  # concurrent notifications share one commit
            sub = self._authenticated(notification)
            jti = self._jwt_id(sub, notification)
            if wait := self._limiter.admit(sub.pk):
                seconds = max(1, math.ceil(wait))
                message = f"over this subscription's rate; retry in {seconds} s"
                raise errors.TooManyRequests(message, {"retryAfter": seconds})
            push = classify(parse_json(notification.body))
            if sub.task_id is not None and push.task_id != sub.task_id:
                raise TaskMismatch(f"this subscription relays task {sub.task_id!r}, not {push.task_id!r}")
            message_id, now = "msg_" + uuid.uuid4().hex, self._clock()
            due = now + dt.timedelta(seconds=self._first_delay())
            self._committer.submit(
                {"b_id": message_id, "b_subscription_pk": sub.pk, "b_task_key": push.task_id or "", "b_jti": jti}
                | {"b_kind": push.kind, "b_body": notification.body, "b_received_at": now, "b_due": due}
            )
        self._on_commit()
        return Accepted(message_id, notification.subscription_id, push.task_id, push.kind)

    def _subscription(self, sub_id: str, *, fresh: bool = False) -> SubscriptionRow:
        """Raises NotFound for an unknown or deleted subscription."""
        now = self._monotonic()
        cached = None if fresh else self._cached.get(sub_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        with self._engine.connect() as conn:
            row = conn.execute(_SUBSCRIPTION, {"b_id": sub_id}).first()
        if row is None or row.status == "deleted":
            self._cached.pop(sub_id, None)
            raise errors.NotFound(f"no relay subscription {sub_id!r}")
        if len(self._cached) >= MAX_CACHED:
            self._cached.clear()
        self._cached[sub_id] = (now + 1.0, row)
        return row

    def _authenticated(self, notification: Notification) -> SubscriptionRow:
        sub = self._subscription(notification.subscription_id)
        if not self._token_ok(sub, notification):
            # A token the cached row refuses may be one rotated in since: ask the database.
            sub = self._subscription(notification.subscription_id, fresh=True)
            if not self._token_ok(sub, notification):
                raise errors.Unauthorized(
                    "the relay token is missing or wrong: send it in X-A2A-Notification-Token, "
                    "A2A-Notification-Token or Authorization: Bearer"
                )
        return sub

    def _token_ok(self, sub: SubscriptionRow, notification: Notification) -> bool:
        hashes, now = TokenHashes(sub.token_hash, sub.previous_token_hash, sub.previous_token_until), self._clock()
        return any(hashes.accepts(token, now) for token in notification.tokens)

    def _jwt_id(self, sub: SubscriptionRow, notification: Notification) -> str | None:
        if sub.auth_mode != "jwt":
            return None
        with self._engine.connect() as conn:
            agent = conn.execute(_AGENT, {"b_pk": sub.agent_pk}).first()
        if agent is None:
            raise errors.Unauthorized("the agent left the catalog: no key is bound to it any more")
        binding = AgentBinding(agent.pk, agent.card_url, agent.owner_id, agent.jwks_url)
        return self._jwt.verify(notification.authorization, binding, notification.audience(), notification.body)

    def _write_batch(self, rows: Sequence[dict[str, Any]]) -> None:
        if len(rows) > 1:
            return self._write(rows)
        self._write_one(rows[0])  # a lone row: the committer does not isolate it, tell a replay here

    def _write_one(self, row: dict[str, Any]) -> None:
        """Write this row alone, telling a JWT replay from any other failure."""
        try:
            self._write([row])
        except IntegrityError:
            if row["b_jti"] is not None and self._jti_seen(row):
                raise ReplayedNotification("this JWT (its jti) was used before") from None
            raise

    def _write(self, rows: Sequence[dict[str, Any]]) -> None:
        # On PostgreSQL the insert's trigger notifies PG_CHANNEL, heard by LISTENing workers on commit.
        with self._engine.begin() as conn:
            self._insert.execute_many(conn, list(rows))

    def _jti_seen(self, row: dict[str, Any]) -> bool:
        with self._engine.connect() as conn:
            return conn.scalar(_JTI, {"b_subscription_pk": row["b_subscription_pk"], "b_jti": row["b_jti"]}) is not None
