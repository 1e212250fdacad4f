"""Each job's last run, kept where every process can read it (the web catalog's `/status`).

A row per job name, overwritten by whichever worker ran it last. Jobs tick every second or so and
most ticks find nothing to do, so an idle run is written at most once a minute per job and
process; a run that claimed, failed or raised is always written."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable

from sqlalchemy import Engine, Integer, String, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base, writer_lock
from registry.db.types import UtcDateTime, utcnow

IDLE_WRITE_EVERY = 60.0  # seconds between writes of a job's idle runs, per process


class JobRun(Base):
    __tablename__ = "job_runs"

    job: Mapped[str] = mapped_column(String(60), primary_key=True)
    finished_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    outcome: Mapped[str] = mapped_column(String(20))  # ok | failed_items | error
    duration_ms: Mapped[int] = mapped_column(Integer)
    claimed: Mapped[int] = mapped_column(Integer)
    failed: Mapped[int] = mapped_column(Integer)
    worker: Mapped[str] = mapped_column(String(80))
    # The last run that found work (claimed something), idle runs since then notwithstanding.
    worked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """One run as the worker saw it."""

    job: str
    worker: str
    outcome: str
    seconds: float
    claimed: int = 0
    failed: int = 0


class JobRunLog:
    """Keeps nothing (tests, and processes that run jobs without a database to report to)."""

    def record(self, run: RunRecord) -> None:
        return None


NO_JOB_RUNS = JobRunLog()


class DatabaseJobRuns(JobRunLog):
    def __init__(self, engine: Engine, *, clock: Callable[[], dt.datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock
        self._writer = writer_lock(engine)  # SQLite's one writer; nothing on PostgreSQL
        self._insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
        self._idle_written: dict[str, float] = {}

    def record(self, run: RunRecord) -> None:
        idle = run.outcome == "ok" and not run.claimed
        if idle and time.monotonic() - self._idle_written.get(run.job, -IDLE_WRITE_EVERY) < IDLE_WRITE_EVERY:
            return
        now = self._clock()
        values = {
            "job": run.job,
            "finished_at": now,
            "outcome": run.outcome,
            "duration_ms": round(run.seconds * 1000),
            "claimed": run.claimed,
            "failed": run.failed,
            "worker": run.worker[:80],
            "worked_at": None if idle else now,
        }
        statement = self._insert(JobRun).values(values)
        kept = {"job"} | ({"worked_at"} if idle else set())
        statement = statement.on_conflict_do_update(
            index_elements=[JobRun.job], set_={name: statement.excluded[name] for name in values if name not in kept}
        )
        with self._writer.hold(), self._engine.begin() as conn:
            conn.execute(statement)
        if idle:
            self._idle_written[run.job] = time.monotonic()


def last_runs(engine: Engine) -> dict[str, JobRun]:
    """Each job's last recorded run, by job name."""
    with engine.connect() as conn:
        rows = conn.execute(select(JobRun.__table__)).all()
    return {row.job: JobRun(**row._mapping) for row in rows}
