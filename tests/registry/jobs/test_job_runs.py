"""Each job's last run, as the workers record it for every process to read."""

from __future__ import annotations

import datetime as dt
from typing import Any

from registry.jobs import DatabaseJobRuns, JobContext, JobReport, last_runs
from registry.jobs.worker import Worker

T0 = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.UTC)


class ScriptedJob:
    """Claims what it is told to on each run, or raises."""

    every = 1.0

    def __init__(self, name: str, claims: list[int | Exception]) -> None:
        self.name = name
        self._claims = claims

    def run(self, ctx: JobContext) -> JobReport:
        claim = self._claims.pop(0)
        if isinstance(claim, Exception):
            raise claim
        return JobReport(self.name, claimed=claim, recorded=claim)


def test_a_run_that_did_work_is_recorded_and_an_idle_one_keeps_when_work_was_last_done(services: Any) -> None:
    clock = iter([T0, T0 + dt.timedelta(minutes=1)])
    runs = DatabaseJobRuns(services.engine, clock=lambda: next(clock))
    worker = Worker([ScriptedJob("scripted", [3, 0])], threads=1, runs=runs)
    worker.run_once()
    first = last_runs(services.engine)["scripted"]
    assert (first.outcome, first.claimed, first.worked_at) == ("ok", 3, T0)
    assert first.worker == worker.context.owner
    worker.run_once()
    idle = last_runs(services.engine)["scripted"]
    assert (idle.finished_at, idle.claimed, idle.worked_at) == (T0 + dt.timedelta(minutes=1), 0, T0)


def test_idle_runs_are_written_at_most_once_a_minute_but_a_failing_run_always(services: Any) -> None:
    stamps = [T0 + dt.timedelta(seconds=i) for i in range(5)]
    runs = DatabaseJobRuns(services.engine, clock=lambda: stamps.pop(0))
    worker = Worker([ScriptedJob("ticker", [0, 0, RuntimeError("database gone")])], threads=1, runs=runs)
    worker.run_once()
    worker.run_once()
    assert last_runs(services.engine)["ticker"].finished_at == T0  # the second idle run was not written
    try:
        worker.run_once()
    except RuntimeError:
        pass
    failed = last_runs(services.engine)["ticker"]
    assert (failed.outcome, failed.finished_at, failed.worked_at) == (
        "error",
        T0 + dt.timedelta(seconds=1),
        T0 + dt.timedelta(seconds=1),
    )
