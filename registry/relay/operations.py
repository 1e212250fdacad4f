"""Looking into and repairing delivery: message lists, the attempt log, replays, retention.

A replay re-queues a delivered or dead-lettered message with a fresh attempt budget and the same
`webhook-id`, in its place in its task's order (later messages not out for delivery wait again).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine, Row, delete, select, update

from registry import errors
from registry.auth import Actor
from registry.cursors import decode_cursor
from registry.db import writer_lock
from registry.db.types import utcnow
from registry.relay.models import MESSAGE_STATES, RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.subscriptions import Page, SubscriptionService, dead_letter_unheld
from registry.relay.task_order import EARLIER_PENDING, IS_PENDING, PROMOTED, TaskKey, lock_tasks, reorder

M, S, A = RelayMessage, RelaySubscription, RelayAttempt
LISTED: tuple[Any, ...] = (M.pk, M.id, M.task_key, M.seq, M.kind, M.state, M.received_at, M.due_at, M.not_before)
LISTED += (M.attempts, M.last_attempt_at, M.last_status, M.last_error, M.finished_at, M.replays, M.body)
PRUNE_BATCH = 5_000
REPLAY_TASKS_PER_TRANSACTION = 200
MAX_ATTEMPTS_SHOWN = 100
# Back in the queue; due at once if it is its task's head (`reorder` decides).
REQUEUED: dict[str, Any] = {"state": "pending", "due_at": None, "not_before": None, "attempts": 0, "finished_at": None}
REQUEUED |= {"lease_owner": None, "lease_until": None, "replays": M.replays + 1}


@dataclasses.dataclass(frozen=True)
class MessageDetail:
    message: Row[*tuple[Any, ...]]
    subscription_id: str
    attempts: list[Row[*tuple[Any, ...]]]


class RelayOperations:
    def __init__(
        self,
        engine: Engine,
        subscriptions: SubscriptionService,
        *,
        retention: float,
        clock: Callable[[], dt.datetime] = utcnow,
        on_replay: Callable[[], None] = lambda: None,
    ) -> None:
        self._engine = engine
        self._subscriptions = subscriptions
        self._retention = dt.timedelta(seconds=retention)
        self._clock = clock
        self._on_replay = on_replay
        self._writer = writer_lock(engine)

    def messages(self, actor: Actor, sub_id: str, *, state: str | None, limit: int, cursor: str | None) -> Page:
        """The subscription's messages, newest first. Raises NotFound, InvalidRequest."""
        sub = self._subscriptions.get(actor, sub_id, kind=None)
        stmt = select(*LISTED).where(M.subscription_pk == sub.pk).order_by(M.pk.desc()).limit(limit + 1)
        if state is not None:
            if state not in MESSAGE_STATES:
                raise errors.InvalidRequest(f"state must be one of {list(MESSAGE_STATES)}")
            stmt = stmt.where(M.state == state)
        if cursor:
            stmt = stmt.where(M.pk < decode_cursor(cursor))
        with self._engine.connect() as conn:
            return Page.of(list(conn.execute(stmt)), limit)

    def message(self, actor: Actor, message_id: str) -> MessageDetail:
        """One message with its attempt log (oldest first). Raises NotFound."""
        message, sub_id = self._owned_message(actor, message_id)
        newest = select(A).where(A.message_pk == message.pk).order_by(A.id.desc()).limit(MAX_ATTEMPTS_SHOWN)
        with self._engine.connect() as conn:
            attempts = list(conn.execute(newest))
        return MessageDetail(message, sub_id, attempts[::-1])

    def replay(self, actor: Actor, message_id: str) -> MessageDetail:
        """Deliver the message again. Raises NotFound, Conflict (still pending, subscription not active)."""
        message, sub_id = self._owned_message(actor, message_id)
        if message.state == "pending":
            raise errors.Conflict(f"message {message_id} is still being delivered; nothing to replay")
        self._requeue(message.subscription_pk, [message.task_key], M.pk == message.pk, M.state != "pending")
        self._on_replay()
        return self.message(actor, message_id)

    def replay_dead(self, actor: Actor, sub_id: str, since: dt.datetime) -> int:
        """Re-queue every message of the subscription dead-lettered at or after `since`. Raises NotFound, Conflict."""
        sub = self._subscriptions.get(actor, sub_id, kind=None)
        dead = (M.subscription_pk == sub.pk, M.state == "dead", M.finished_at >= since)
        with self._engine.connect() as conn:
            _refuse_inactive(conn, sub.pk)
            task_keys = list(conn.scalars(select(M.task_key).where(*dead).distinct().order_by(M.task_key)))
        count = 0
        # A few hundred tasks per transaction: one lock per task would exhaust PostgreSQL's lock table.
        for start in range(0, len(task_keys), REPLAY_TASKS_PER_TRANSACTION):
            chunk = task_keys[start : start + REPLAY_TASKS_PER_TRANSACTION]
            count += self._requeue(sub.pk, chunk, *dead, M.task_key.in_(chunk))
        if count:
            self._on_replay()
        return count

    def prune(self) -> int:
        """Delete finished messages past retention, dead-letter what reached a deleted subscription while the
        ingress had it cached, and make due any waiting message with nothing earlier pending in its task."""
        now = self._clock()
        cutoff = now - self._retention
        with self._engine.begin() as conn:
            deleted = select(S.pk).where(S.status == "deleted")
            conn.execute(dead_letter_unheld(M.subscription_pk.in_(deleted), now))  # the next prune takes what it leaves
            # A safety net for in-order delivery; rows a worker holds (promoting them itself) are passed over.
            stranded = select(M.pk).where(M.state == IS_PENDING, M.due_at.is_(None), M.lease_owner.is_(None))
            stranded = stranded.where(~EARLIER_PENDING).with_for_update(skip_locked=True, key_share=True)
            conn.execute(update(M).where(M.pk.in_(stranded.scalar_subquery())).values(PROMOTED), {"b_now": now})
        removed = 0
        while True:
            finished = select(M.pk).where(M.received_at < cutoff, M.state != "pending", M.finished_at < cutoff)
            old = finished.limit(PRUNE_BATCH).scalar_subquery()
            with self._engine.begin() as conn:
                conn.execute(delete(A).where(A.message_pk.in_(old)))
                count = conn.execute(delete(M).where(M.pk.in_(old))).rowcount
            removed += count
            if count < PRUNE_BATCH:
                return removed

    def _requeue(self, sub_pk: int, task_keys: list[str], *where: Any) -> int:
        tasks: list[TaskKey] = [(sub_pk, task) for task in task_keys]
        with self._writer.hold(), self._engine.begin() as conn:
            lock_tasks(conn, tasks)
            _refuse_inactive(conn, sub_pk)
            count = conn.execute(update(M).where(*where).values(REQUEUED)).rowcount
            reorder(conn, tasks, self._clock())
        return int(count)

    def _owned_message(self, actor: Actor, message_id: str) -> tuple[Row[*tuple[Any, ...]], str]:
        sub = (M.subscription_pk, S.id.label("sub_id"), S.owner_id, S.status.label("sub_status"))
        with self._engine.connect() as conn:
            stmt = select(*LISTED, *sub).join(S, S.pk == M.subscription_pk).where(M.id == message_id)
            row = conn.execute(stmt).first()
        if row is None or row.sub_status == "deleted" or not (actor.is_admin or row.owner_id == actor.principal_id):
            raise errors.NotFound(f"no relay message {message_id!r}")
        return row, row.sub_id


def _refuse_inactive(conn: Connection, sub_pk: int) -> None:
    status = conn.scalar(select(S.status).where(S.pk == sub_pk))
    if status != "active":
        raise errors.Conflict(f"the subscription is {status}; enable it before replaying")
