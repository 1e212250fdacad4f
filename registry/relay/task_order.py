"""In-order delivery per task: only the head of a task's queue is due.

A2A gives no order across tasks, but within one task a later update must not overtake an earlier
one. A pending message is due (`due_at` set) only while no earlier message of its task is still
pending; the others wait with `due_at` NULL. Claiming is then a plain index range on `due_at`
whatever the database knows about the table, instead of an anti-join per candidate whose plan a
fresh or stale table statistic can turn into a scan of every pending row.

Who keeps that true:
- the ingress writes a message due only if its task has nothing pending (`WAITING_OR_DUE`);
- whoever ends a message (delivered, dead-lettered) promotes the next one of its task (`promote`);
- a replay, which can put an earlier message back before a later one, re-orders the task (`reorder`).

A message that failed an attempt has a back-off (`due_at` in the future, perhaps the target's
`Retry-After`). If a replay makes it wait, `reorder` keeps that time in `not_before`, and once it
is its task's head again it is due at the later of that time and now: being made to wait must not
make the target see it sooner. A message that has had no attempt is due as soon as it is the head.

On SQLite each of these runs under the database's single write lock, so each sees the others'
work. On PostgreSQL an ingress that finds an earlier message pending and a worker that is just
ending that message could each miss the other's uncommitted row and leave a message waiting for
nothing. So:
- the ingress locks (`FOR SHARE SKIP LOCKED`) the pending message it finds, in the statement that
  inserts. A worker that comes to end that message after it waits for the ingress's commit (its
  rows are short transactions that wait for no one), so the promotion it makes later in its
  transaction sees the new message. A message a worker is ending (its row is locked) is skipped,
  and so is one a committed worker ended (the lock reads the row as committed): the new message is
  then due at once. If the worker was in fact recording a failed attempt, the message it ends
  later is still pending and the claim passes over the new one until it ends (`EARLIER_PENDING`).
  So the ingress never waits, and a worker only for a notification that found its message pending.
- a replay and a worker take a transaction-scoped advisory lock per task, exclusive, in one
  sorted order (`lock_tasks`): a replay before it touches a row; the worker after it wrote its
  outcomes and before it promotes. (The worker holds only rows it leases, which a replay never
  waits for.) A notification that arrives while a replay re-queues an earlier message of its task
  may be due at once; the claim passes over it until that earlier message has ended
  (`EARLIER_PENDING`).
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
# A literal, not a bound parameter: the partial index of pending messages is usable only when the
# statement itself says state = 'pending' (a plan PostgreSQL caches for any parameter value cannot
# use it, and would step over every delivered message of the task instead).
IS_PENDING: ColumnElement[str] = literal_column("'pending'")
_LOCK = text("SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k")


# A message of the same task with a lower sequence number is still pending (correlated to the
# statement's relay_messages row).
EARLIER_PENDING = exists().where(_PENDING.subscription_pk == M.subscription_pk, _PENDING.task_key == M.task_key,
                                 _PENDING.state == IS_PENDING, _PENDING.seq < M.seq)


def waiting_or_due(subscription_pk: Any, task_key: Any, due: Any) -> Any:
    """The `due_at` of a new message: NULL while its task has a message pending, else `due` (the
    pending message found is locked `FOR SHARE` until the inserting transaction ends; one being
    ended is skipped: see above)."""
    busy = exists(
        select(literal_column("1")).where(_PENDING.subscription_pk == subscription_pk, _PENDING.task_key == task_key,
                                          _PENDING.state == IS_PENDING).limit(1).with_for_update(read=True, skip_locked=True)
    )
    return case((busy, None), else_=due)


# The earliest pending message of each task, made due now if it was waiting.
_HEAD = (
    select(_PENDING.pk)
    .where(_PENDING.subscription_pk == bindparam("b_sub"), _PENDING.task_key == bindparam("b_task"),
           _PENDING.state == IS_PENDING)
    .order_by(_PENDING.seq).limit(1).scalar_subquery()
)
_NOW = bindparam("b_now", type_=M.due_at.type)
# The values that make a waiting head due (executed with `b_now`): now, or when its back-off ends.
PROMOTED = {M.due_at: case((M.not_before > _NOW, M.not_before), else_=_NOW), M.not_before: None}
_PROMOTE = update(M).where(M.pk == _HEAD, M.state == "pending", M.due_at.is_(None)).values(PROMOTED)
# The values that make a due message wait (its back-off kept only if it has had an attempt).
_PARKED = {M.not_before: case((M.attempts > 0, M.due_at), else_=None), M.due_at: None}


def lock_key(task: TaskKey) -> int:
    """A stable signed 64-bit advisory-lock key for a task (a collision only serialises two tasks)."""
    digest = hashlib.blake2b(f"{task[0]}:{task[1]}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_tasks(conn: Connection, tasks: Iterable[TaskKey]) -> None:
    """PostgreSQL: hold every task's lock until this transaction ends. SQLite's write lock already does."""
    if conn.dialect.name != "postgresql":
        return
    keys = sorted({lock_key(task) for task in tasks})
    if keys:
        conn.execute(_LOCK, {"keys": keys})


def promote(conn: Connection, tasks: Iterable[TaskKey], now: dt.datetime) -> None:
    """Make the head of each task due, if it was waiting: now, or when the back-off it had before it was
    made to wait ends (the caller holds the tasks' locks)."""
    params = [{"b_sub": sub, "b_task": task, "b_now": now} for sub, task in sorted(set(tasks))]
    if params:
        conn.execute(_PROMOTE, params)


def reorder(conn: Connection, tasks: Iterable[TaskKey], now: dt.datetime) -> None:
    """After messages were put back in the queue: only each task's head stays due (the caller holds the
    tasks' locks). A later message leased to a worker is left alone, even past its lease: it may be
    out for delivery (it cannot be recalled), and its worker may hold its row while it waits for
    these tasks' locks (waiting for that row here would deadlock)."""
    tasks = sorted(set(tasks))
    if not tasks:
        return
    conn.execute(
        update(M).where(
            tuple_(M.subscription_pk, M.task_key).in_(tasks), M.state == "pending", M.due_at.is_not(None),
            M.lease_owner.is_(None), EARLIER_PENDING,
        ).values(_PARKED)
    )
    promote(conn, tasks, now)

