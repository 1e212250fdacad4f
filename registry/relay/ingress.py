"""The relay ingress: authenticate an agent's notification, check it, and commit it to the outbox.

The 202 is given only after the message is committed (`Nothing is lost between a 202 and
delivery`): notifications that arrive together share one transaction (`GroupCommitter`), and
each caller returns once its own row is durable. Order of checks: unknown subscription (404),
credentials (401), rate (429), body (422), task (409), JWT replay (409).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, Row, bindparam, func, insert, select
from sqlalchemy.exc import IntegrityError

from registry import errors, jsontext
from registry.db import DriverStatement, writer_lock
from registry.db.group_commit import GroupCommitter
from registry.db.types import utcnow
from registry.relay.agent_jwt import AgentBinding, AgentJwtVerifier
from registry.relay.bodies import PushBody, classify
from registry.relay.catalog_tables import AGENTS
from registry.relay.errors import ReplayedNotification, TaskMismatch
from registry.relay.models import RelayMessage, RelaySubscription
from registry.relay.rate_limit import RateLimiter, retry_after_seconds
from registry.relay.relay_tokens import TokenHashes
from registry.relay.task_order import waiting_or_due

PG_CHANNEL = "agentdex_relay"  # notified by the trigger `relay_messages_notify` (the baseline migration)
MAX_CACHED = 10_000
S, M = RelaySubscription, RelayMessage


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex


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


@dataclasses.dataclass(frozen=True)
class _Row:
    values: dict[str, Any]
    jti: str | None


_SUBSCRIPTION = select(S.pk, S.id, S.status, S.task_id, S.auth_mode, S.token_hash, S.previous_token_hash,
                       S.previous_token_until, S.agent_pk).where(S.id == bindparam("b_id"))
_AGENT = select(AGENTS.c.pk, AGENTS.c.card_url, AGENTS.c.owner_id, AGENTS.c.jwks_url).where(AGENTS.c.pk == bindparam("b_pk"))
_JTI = select(M.pk).where(M.subscription_pk == bindparam("b_sub"), M.jti == bindparam("b_jti"))
# A message's place in its task's order: increasing in the order the relay accepted them (not
# contiguous). SQLite has one writer, so the task's next number is read under its lock. On
# PostgreSQL two web processes would read the same "next" number for one task and one batch would
# fail on the unique order; a database sequence never hands out a number twice, and numbers taken
# by transactions that commit later than others only ever order messages that arrived together.
ORDER_SEQUENCE = "relay_message_order"
_TASK_NEXT = (
    select(func.coalesce(func.max(M.seq), 0) + 1)
    .where(M.subscription_pk == bindparam("b_sub"), M.task_key == bindparam("b_task")).scalar_subquery()
)


def _insert(dialect: str) -> Any:
    # inline(): nothing is read back (a lone row's INSERT would otherwise end in RETURNING pk).
    return insert(M).inline().values(
        id=bindparam("b_id"), subscription_pk=bindparam("b_sub"), task_key=bindparam("b_task"),
        seq=func.nextval(ORDER_SEQUENCE) if dialect == "postgresql" else _TASK_NEXT,
        kind=bindparam("b_kind"), body=bindparam("b_body"), jti=bindparam("b_jti"), received_at=bindparam("b_at"),
        state="pending", due_at=waiting_or_due(bindparam("b_sub"), bindparam("b_task"), bindparam("b_due", type_=M.due_at.type)),
        attempts=0, replays=0,
    )


class RelayIngress:
    def __init__(self, engine: Engine, jwt: AgentJwtVerifier, limiter: RateLimiter, *,
                 first_delay: Callable[[], float] = lambda: 0.0, on_commit: Callable[[], None] = lambda: None,
                 clock: Callable[[], dt.datetime] = utcnow, monotonic: Callable[[], float] = time.monotonic,
                 new_id: Callable[[], str] = new_message_id) -> None:
        self._engine = engine
        self._subscriptions = SubscriptionCache(engine, monotonic=monotonic)
        self._jwt = jwt
        self._limiter = limiter
        self._first_delay = first_delay
        self._on_commit = on_commit
        self._clock = clock
        self._new_id = new_id
        self._insert_statement = DriverStatement(_insert(engine.dialect.name))
        self._committer: GroupCommitter[_Row] = GroupCommitter(
            self._write_batch, self._write_one, max_batch=128, serialize=writer_lock(engine).hold
        )

    def forget(self, sub_id: str) -> None:
        """The subscription changed (deleted, disabled, rotated): read it afresh next time."""
        self._subscriptions.forget(sub_id)

    def accept(self, notification: Notification) -> Accepted:
        """Raises NotFound, Unauthorized, TooManyRequests, InvalidNotification, TaskMismatch,
        ReplayedNotification."""
        with self._committer.expecting():  # concurrent notifications share one commit
            sub = self._authenticated(notification)
            jti = self._jwt_id(sub, notification)
            wait = self._limiter.admit(sub.pk)
            if wait:
                seconds = retry_after_seconds(wait)
                raise errors.TooManyRequests(f"over this subscription's rate; retry in {seconds} s", {"retryAfter": seconds})
            push = classify(_parse(notification.body))
            if sub.task_id is not None and push.task_id != sub.task_id:
                raise TaskMismatch(f"this subscription relays task {sub.task_id!r}, not {push.task_id!r}")
            message_id = self._new_id()
            self._committer.submit(_Row(self._values(message_id, sub.pk, push, notification.body, jti), jti))
        self._on_commit()
        return Accepted(message_id, sub.id, push.task_id, push.kind)

    # -- checks ---------------------------------------------------------------------------

    def _authenticated(self, notification: Notification) -> Row[*tuple[Any, ...]]:
        sub = self._subscriptions.get(notification.subscription_id)
        if not self._token_ok(sub, notification):
            # A token the cached row refuses may be one rotated in since: ask the database.
            sub = self._subscriptions.get(notification.subscription_id, fresh=True)
            if not self._token_ok(sub, notification):
                raise errors.Unauthorized(
                    "the relay token is missing or wrong: send it in X-A2A-Notification-Token, "
                    "A2A-Notification-Token or Authorization: Bearer"
                )
        return sub

    def _token_ok(self, sub: Row[*tuple[Any, ...]], notification: Notification) -> bool:
        hashes = TokenHashes(sub.token_hash, sub.previous_token_hash, sub.previous_token_until)
        now = self._clock()
        return any(hashes.accepts(token, now) for token in notification.tokens)

    def _jwt_id(self, sub: Row[*tuple[Any, ...]], notification: Notification) -> str | None:
        if sub.auth_mode != "jwt":
            return None
        return self._jwt.verify(notification.authorization, self._binding(sub), notification.audience(),
                                notification.body)

    def _binding(self, sub: Row[*tuple[Any, ...]]) -> AgentBinding:
        with self._engine.connect() as conn:
            agent = conn.execute(_AGENT, {"b_pk": sub.agent_pk}).first()
        if agent is None:
            raise errors.Unauthorized("the agent left the catalog: no key is bound to it any more")
        return AgentBinding(agent.pk, agent.card_url, agent.owner_id, agent.jwks_url)

    def _values(self, message_id: str, sub_pk: int, push: PushBody, body: bytes, jti: str | None) -> dict[str, Any]:
        now = self._clock()
        return {"b_id": message_id, "b_sub": sub_pk, "b_task": push.task_id or "", "b_kind": push.kind,
                "b_body": body, "b_jti": jti, "b_at": now, "b_due": now + dt.timedelta(seconds=self._first_delay())}

    # -- persistence ----------------------------------------------------------------------

    def _write_batch(self, rows: Sequence[_Row]) -> None:
        if len(rows) == 1:  # the committer writes a failed batch's rows one by one, each here
            return self._write_one(rows[0])
        self._insert(rows)

    def _write_one(self, row: _Row) -> None:
        """Write this row alone (its batch failed), telling a JWT replay from anything else."""
        try:
            self._insert([row])
        except IntegrityError:
            if row.jti is not None and self._jti_seen(row):
                raise ReplayedNotification("this JWT (its jti) was used before") from None
            raise

    def _insert(self, rows: Sequence[_Row]) -> None:
        with self._engine.begin() as conn:
            # On PostgreSQL a trigger on the insert notifies PG_CHANNEL: LISTENing workers hear of
            # it when (and only if) this commits, with no round trip of its own.
            self._insert_statement.execute_many(conn, [row.values for row in rows])

    def _jti_seen(self, row: _Row) -> bool:
        with self._engine.connect() as conn:
            return conn.scalar(_JTI, {"b_sub": row.values["b_sub"], "b_jti": row.jti}) is not None


class SubscriptionCache:
    """Every notification needs its subscription's row; it is kept for `seconds` in this process.

    The price: deleting or disabling a subscription in another process takes effect here up to
    `seconds` later (a message accepted meanwhile is dead-lettered by the prune job); in this
    process the change forgets the row at once. A rotation takes effect at once anywhere: a token
    the cached row refuses is checked again against a fresh read.
    """

    def __init__(self, engine: Engine, *, seconds: float = 1.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._seconds = seconds
        self._monotonic = monotonic
        self._rows: dict[str, tuple[float, Row[*tuple[Any, ...]]]] = {}

    def forget(self, sub_id: str) -> None:
        self._rows.pop(sub_id, None)

    def get(self, sub_id: str, *, fresh: bool = False) -> Row[*tuple[Any, ...]]:
        """Raises NotFound for an unknown or deleted subscription."""
        now = self._monotonic()
        cached = None if fresh else self._rows.get(sub_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        with self._engine.connect() as conn:
            row = conn.execute(_SUBSCRIPTION, {"b_id": sub_id}).first()
        if row is None or row.status == "deleted":
            self._rows.pop(sub_id, None)
            raise errors.NotFound(f"no relay subscription {sub_id!r}")
        if len(self._rows) >= MAX_CACHED:
            self._rows.clear()
        self._rows[sub_id] = (now + self._seconds, row)
        return row


def _parse(body: bytes) -> object:
    try:
        return jsontext.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise errors.BadRequest(f"the body is not valid JSON: {error}") from None
    except RecursionError:
        raise errors.BadRequest("the body nests JSON too deeply") from None
