"""Looking into and repairing delivery: message lists, the attempt log, replays, retention.

A replay puts a delivered or dead-lettered message back in the queue, due now, with a fresh
attempt budget and the same `webhook-id` (it is the same message: a receiver that already
processed it may drop it). It keeps its place in its task's order: a later message of the task
that is not already out for delivery waits for it again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, Row, delete, select, update

from registry import errors
from registry.auth import Actor
from registry.cursors import decode_cursor, encode_cursor
from registry.db import writer_lock
from registry.db.types import utcnow
from registry.relay.models import MESSAGE_STATES, RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.subscriptions import SubscriptionService, dead_letter_unheld
from registry.relay.task_order import EARLIER_PENDING, IS_PENDING, PROMOTED, lock_tasks, reorder

M, S, A = RelayMessage, RelaySubscription, RelayAttempt
LISTED = (M.pk, M.id, M.task_key, M.seq, M.kind, M.state, M.received_at, M.due_at, M.not_before, M.attempts,
          M.last_attempt_at, M.last_status, M.last_error, M.finished_at, M.replays, M.body)
PRUNE_BATCH = 5_000
REPLAY_TASKS_PER_TRANSACTION = 200
MAX_ATTEMPTS_SHOWN = 100


@dataclasses.dataclass(frozen=True)
class MessagePage:
    items: list[Row[*tuple[Any, ...]]]
    next_cursor: str | None


@dataclasses.dataclass(frozen=True)
class MessageDetail:
    message: Row[*tuple[Any, ...]]
    subscription_id: str
    attempts: list[Row[*tuple[Any, ...]]]


class RelayOperations:
    def __init__(self, engine: Engine, subscriptions: SubscriptionService, *, retention: float,
                 clock: Callable[[], dt.datetime] = utcnow, on_replay: Callable[[], None] = lambda: None) -> None:
        self._engine = engine
        self._subscriptions = subscriptions
        self._retention = dt.timedelta(seconds=retention)
        self._clock = clock
        self._on_replay = on_replay
        self._writer = writer_lock(engine)

    def messages(self, actor: Actor, sub_id: str, *, state: str | None, limit: int, cursor: str | None) -> MessagePage:
        """The subscription's messages, newest first. Raises NotFound, InvalidRequest."""
        sub = self._subscriptions.get(actor, sub_id)
        stmt = select(*LISTED).where(M.subscription_pk == sub.pk).order_by(M.pk.desc()).limit(limit + 1)
        if state is not None:
            if state not in MESSAGE_STATES:
                raise errors.InvalidRequest(f"state must be one of {list(MESSAGE_STATES)}")
            stmt = stmt.where(M.state == state)
        if cursor:
            stmt = stmt.where(M.pk < decode_cursor(cursor))
        with self._engine.connect() as conn:
            rows = list(conn.execute(stmt))
        more = len(rows) > limit
        rows = rows[:limit]
        return MessagePage(rows, encode_cursor(rows[-1].pk) if more else None)

    def message(self, actor: Actor, message_id: str) -> MessageDetail:
        """One message with its attempt log (oldest first). Raises NotFound."""
        message, sub_id = self._owned_message(actor, message_id)
        with self._engine.connect() as conn:
            attempts = list(conn.execute(
                select(A).where(A.message_pk == message.pk).order_by(A.id.desc()).limit(MAX_ATTEMPTS_SHOWN)
            ))
        return MessageDetail(message, sub_id, attempts[::-1])

    def replay(self, actor: Actor, message_id: str) -> MessageDetail:
        """Deliver the message again. Raises NotFound, Conflict (still pending, subscription not active)."""
        message, sub_id = self._owned_message(actor, message_id)
        if message.state == "pending":
            raise errors.Conflict(f"message {message_id} is still being delivered; nothing to replay")
        task = (message.subscription_pk, message.task_key)
        with self._writer.hold(), self._engine.begin() as conn:
            lock_tasks(conn, [task])
            self._refuse_inactive(conn, message.subscription_pk)
            conn.execute(update(M).where(M.pk == message.pk, M.state != "pending").values(**self._requeued()))
            reorder(conn, [task], self._clock())
        self._on_replay()
        return self.message(actor, message_id)

    def replay_dead(self, actor: Actor, sub_id: str, since: dt.datetime) -> int:
        """Re-queue every message of the subscription dead-lettered at or after `since`. Raises NotFound, Conflict."""
        sub = self._subscriptions.get(actor, sub_id)
        dead = (M.subscription_pk == sub.pk, M.state == "dead", M.finished_at >= since)
        with self._engine.connect() as conn:
            self._refuse_inactive(conn, sub.pk)
            task_keys = list(conn.scalars(select(M.task_key).where(*dead).distinct().order_by(M.task_key)))
        count = 0
        # A few hundred tasks per transaction: a long outage can dead-letter thousands of tasks, and
        # one lock per task in one transaction would exhaust PostgreSQL's shared lock table.
        for start in range(0, len(task_keys), REPLAY_TASKS_PER_TRANSACTION):
            chunk = task_keys[start : start + REPLAY_TASKS_PER_TRANSACTION]
            tasks = [(sub.pk, task) for task in chunk]
            with self._writer.hold(), self._engine.begin() as conn:
                lock_tasks(conn, tasks)
                count += conn.execute(update(M).where(*dead, M.task_key.in_(chunk)).values(**self._requeued())).rowcount
                reorder(conn, tasks, self._clock())
        if count:
            self._on_replay()
        return int(count)

    def prune(self) -> int:
        """Delete delivered and dead messages (and their attempts) past the retention period,
        dead-letter what reached a deleted subscription while the ingress still had it cached, and
        make due any waiting message that has nothing earlier pending in its task."""
        now = self._clock()
        cutoff = now - self._retention
        with self._engine.begin() as conn:
            # Passing over what a worker holds, as the DELETE does (`registry.relay.subscriptions`); the next
            # prune takes what it leaves.
            conn.execute(dead_letter_unheld(M.subscription_pk.in_(select(S.pk).where(S.status == "deleted")), now))
            # A safety net for in-order delivery: a waiting message with nothing earlier pending in its
            # task is made due (e.g. its head was ended by a worker of a version before task heads).
            # Rows a worker holds (promoting them itself) are passed over, so the two never wait
            # for each other's rows.
            stranded = (select(M.pk).where(M.state == IS_PENDING, M.due_at.is_(None), M.lease_owner.is_(None),
                                           ~EARLIER_PENDING)
                        .with_for_update(skip_locked=True, key_share=True).scalar_subquery())
            conn.execute(update(M).where(M.pk.in_(stranded)).values(PROMOTED), {"b_now": now})
        removed = 0
        while True:
            old = (select(M.pk).where(M.received_at < cutoff, M.state != "pending", M.finished_at < cutoff)
                   .limit(PRUNE_BATCH))
            with self._engine.begin() as conn:
                conn.execute(delete(A).where(A.message_pk.in_(old.scalar_subquery())))
                count = conn.execute(delete(M).where(M.pk.in_(old.scalar_subquery()))).rowcount
            removed += count
            if count < PRUNE_BATCH:
                return removed

    # -- internals ------------------------------------------------------------------------

    def _owned_message(self, actor: Actor, message_id: str) -> tuple[Row[*tuple[Any, ...]], str]:
        with self._engine.connect() as conn:
            row = conn.execute(
                select(*LISTED, M.subscription_pk, S.id.label("sub_id"), S.owner_id, S.status.label("sub_status"))
                .join(S, S.pk == M.subscription_pk).where(M.id == message_id)
            ).first()
        if row is None or row.sub_status == "deleted" or not (actor.is_admin or row.owner_id == actor.principal_id):
            raise errors.NotFound(f"no relay message {message_id!r}")
        return row, row.sub_id

    @staticmethod
    def _refuse_inactive(conn: Any, sub_pk: int) -> None:
        status = conn.scalar(select(S.status).where(S.pk == sub_pk))
        if status != "active":
            raise errors.Conflict(f"the subscription is {status}; enable it before replaying")

    def _requeued(self) -> dict[str, Any]:
        # Due at once if it is its task's head: `reorder` decides.
        return {"state": "pending", "due_at": None, "not_before": None, "attempts": 0, "finished_at": None,
                "lease_owner": None, "lease_until": None, "replays": M.replays + 1}
