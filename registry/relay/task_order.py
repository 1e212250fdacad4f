"""In-order delivery per task: a pending message is due (`due_at` set) only while nothing earlier
of its task is pending, so claiming is a plain index range on `due_at`. The ingress writes a message
due only if its task has nothing pending (`waiting_or_due`), whoever ends a message promotes the
next (`promote`), a replay re-orders the task (`reorder`); a message made to wait keeps its back-off.

SQLite's single writer serialises all this. On PostgreSQL an ingress and a worker ending the message
it found pending could miss each other's uncommitted rows, so the ingress locks that message `FOR
SHARE SKIP LOCKED` in its INSERT (one being ended is skipped, and the claim passes over the new
message while anything earlier is pending: `EARLIER_PENDING`), and replays and workers take
per-task advisory locks in one sorted order (`lock_tasks`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, Connection, bindparam, case, exists, literal_column, select, text, tuple_, update
from sqlalchemy.orm import aliased

from registry.relay.models import RelayMessage

M = RelayMessage
TaskKey = tuple[int, str]  # (subscription pk, task key)

_PENDING = aliased(M)
# A literal, not a bound parameter: only then can PostgreSQL use the partial index of pending messages.
IS_PENDING: ColumnElement[str] = literal_column("'pending'")
_LOCK = text("SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k")
_SAME_TASK = (_PENDING.subscription_pk == M.subscription_pk, _PENDING.task_key == M.task_key)
# A message of the statement's row's task with a lower number is still pending.
EARLIER_PENDING = exists().where(*_SAME_TASK, _PENDING.state == IS_PENDING, _PENDING.seq < M.seq)


def waiting_or_due(subscription_pk: Any, task_key: Any, due: Any) -> Any:
    """A new message's `due_at`: NULL while its task has a message pending (locked, see above), else `due`."""
    same_task = (_PENDING.subscription_pk == subscription_pk, _PENDING.task_key == task_key)
    pending = select(_PENDING.pk).where(*same_task, _PENDING.state == IS_PENDING).limit(1)
    return case((exists(pending.with_for_update(read=True, skip_locked=True)), None), else_=due)


_HEAD = (  # the earliest pending message of a task
    select(_PENDING.pk)
    .where(_PENDING.subscription_pk == bindparam("b_sub"), _PENDING.task_key == bindparam("b_task"))
    .where(_PENDING.state == IS_PENDING)
    .order_by(_PENDING.seq)
    .limit(1)
    .scalar_subquery()
)
_NOW = bindparam("b_now", type_=M.due_at.type)
# What makes a waiting head due (executed with `b_now`): now, or when its back-off ends.
PROMOTED = {M.due_at: case((M.not_before > _NOW, M.not_before), else_=_NOW), M.not_before: None}
_PROMOTE = update(M).where(M.pk == _HEAD, M.state == "pending", M.due_at.is_(None)).values(PROMOTED)
# What makes a due message wait (its back-off kept only if it has had an attempt).
_PARKED = {M.not_before: case((M.attempts > 0, M.due_at), else_=None), M.due_at: None}


def lock_tasks(conn: Connection, tasks: Iterable[TaskKey]) -> None:
    """PostgreSQL: hold each task's advisory lock until the transaction ends (SQLite's write lock already does)."""
    # A stable signed 64-bit key per task: a collision only serialises two tasks.
    digests = (hashlib.blake2b(f"{sub}:{task}".encode(), digest_size=8).digest() for sub, task in tasks)
    keys = sorted({int.from_bytes(digest, "big", signed=True) for digest in digests})
    if keys and conn.dialect.name == "postgresql":
        conn.execute(_LOCK, {"keys": keys})


def promote(conn: Connection, tasks: Iterable[TaskKey], now: dt.datetime) -> None:
    """Make each task's head due if it was waiting (the caller holds the tasks' locks)."""
    params = [{"b_sub": sub, "b_task": task, "b_now": now} for sub, task in sorted(set(tasks))]
    if params:
        conn.execute(_PROMOTE, params)


def reorder(conn: Connection, tasks: Iterable[TaskKey], now: dt.datetime) -> None:
    """After messages were put back in the queue: only each task's head stays due (the caller holds the
    tasks' locks). A later message leased to a worker is left alone: it may be out for delivery, and
    its worker may hold its row while it waits for these tasks' locks (waiting here would deadlock)."""
    tasks = sorted(set(tasks))
    if tasks:
        in_tasks = tuple_(M.subscription_pk, M.task_key).in_(tasks)
        parked = (in_tasks, M.state == "pending", M.due_at.is_not(None), M.lease_owner.is_(None), EARLIER_PENDING)
        conn.execute(update(M).where(*parked).values(_PARKED))
        promote(conn, tasks, now)
