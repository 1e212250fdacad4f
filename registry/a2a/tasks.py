"""Where the agent's tasks are kept: the `a2a_tasks` table, for `retention` seconds after their
last change (A2A v1.0 §3.3.1: a task may be purged; `GetTask` then answers TaskNotFound).

Every `SendMessage` makes a task, so new tasks are written as the registry writes its other hot
rows: tasks that arrive together are written together (`GroupCommitter`), behind SQLite's one
writer lock. On PostgreSQL the insert is one autocommit statement (each task stands alone: no
BEGIN and COMMIT round trips for it). Expired tasks are deleted at most once a minute per process.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from typing import Any, cast

from sqlalchemy import Connection, Engine, TableClause, bindparam, delete, insert, select, update

from registry import jsontext
from registry.a2a.models import A2ATask
from registry.db import single_statements, writer_lock
from registry.db.group_commit import GroupCommitter
from registry.db.types import utcnow

TASKS = cast(TableClause, A2ATask.__table__)
RETENTION = 3600.0  # seconds a task stays readable after its last change
PRUNE_EVERY = 60.0


@dataclasses.dataclass(frozen=True)
class StoredTask:
    task: dict[str, Any]
    state: str
    principal_id: int | None


class TaskStore:
    def __init__(
        self,
        engine: Engine,
        *,
        retention: float = RETENTION,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._statements = single_statements(engine)  # reads, and the inserts of new tasks
        self._retention = dt.timedelta(seconds=retention)
        self._clock = clock
        self._monotonic = monotonic
        self._next_prune = 0.0
        self._writer = writer_lock(engine)
        self._committer: GroupCommitter[dict[str, Any]] = GroupCommitter(
            self._write, lambda row: self._write([row]), max_batch=128, serialize=self._writer.hold
        )
        self._read = select(TASKS.c.body, TASKS.c.state, TASKS.c.principal_id).where(
            TASKS.c.id == bindparam("id"), TASKS.c.expires_at > bindparam("now")
        )

    def add(self, task: dict[str, Any], principal_id: int | None) -> None:
        """Keep a new task (committed when this returns)."""
        self._committer.submit(self._row(task, principal_id))

    def get(self, task_id: str) -> StoredTask | None:
        """The task, unless it is unknown or expired."""
        with self._statements.connect() as conn:
            row = conn.execute(self._read, {"id": task_id, "now": self._clock()}).first()
        return None if row is None else StoredTask(jsontext.loads(row.body), row.state, row.principal_id)

    def replace(self, task: dict[str, Any], principal_id: int | None, was: str) -> bool:
        """Store the task's new state, if it is still in state `was` (another request may have
        changed it meanwhile): whether it was."""
        row = self._row(task, principal_id)
        stmt = update(TASKS).where(TASKS.c.id == row["id"], TASKS.c.state == was).values(**row)
        with self._writer.hold(), self._engine.begin() as conn:
            return conn.execute(stmt).rowcount == 1

    def prune(self) -> int:
        """Remove expired tasks; how many."""
        with self._writer.hold(), self._engine.begin() as conn:
            return self._delete_expired(conn)

    def _row(self, task: dict[str, Any], principal_id: int | None) -> dict[str, Any]:
        now = self._clock()
        return {
            "id": task["id"],
            "context_id": task["contextId"],
            "state": task["status"]["state"],
            "principal_id": principal_id,
            "body": jsontext.dumps(task),
            "updated_at": now,
            "expires_at": now + self._retention,
        }

    def _write(self, rows: list[dict[str, Any]]) -> None:
        with self._statements.begin() as conn:
            conn.execute(insert(TASKS), rows)
            if self._monotonic() >= self._next_prune:
                self._next_prune = self._monotonic() + PRUNE_EVERY
                self._delete_expired(conn)

    def _delete_expired(self, conn: Connection) -> int:
        return int(conn.execute(delete(TASKS).where(TASKS.c.expires_at <= self._clock())).rowcount)
