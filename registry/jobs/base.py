"""The job framework: what a job is, what it is given, and the leased-work loop most jobs are.

A `Job` is anything with a `name`, a tick period `every` and `run(ctx)`. APScheduler only calls
`run` on each tick; the job asks the database what is due. Most jobs are `LeasedJob`s: they
claim due rows with a lease (`registry.jobs.leases`), do the slow part (network I/O) in the
worker's bounded thread pool with no database transaction open, then record the results in one
short transaction, but only for rows whose lease they still hold.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Outcome = TypeVar("Outcome")


@dataclasses.dataclass(frozen=True)
class JobContext:
    """What every run gets: who holds the leases, the bounded pool for I/O, and a stop signal."""

    owner: str
    executor: Executor
    stopping: threading.Event = dataclasses.field(default_factory=threading.Event)


@dataclasses.dataclass
class JobReport:
    """What one run did. `failed` items keep their lease until it expires, then are retried."""

    job: str
    claimed: int = 0
    recorded: int = 0
    failed: int = 0
    lost: int = 0  # results dropped because the lease had passed to another worker

    def __str__(self) -> str:
        return f"{self.job}: claimed {self.claimed}, recorded {self.recorded}, failed {self.failed}, lost {self.lost}"


class Job(Protocol):
    """A scheduled job. `run` must be idempotent: running it twice does the due work once."""

    name: str
    every: float

    def run(self, ctx: JobContext) -> JobReport: ...


class LeasedWork(Protocol[Item, Outcome]):
    """A queue of due items kept in the database (see `LeasedJob`)."""

    def claim(self, owner: str, limit: int) -> Sequence[Item]:
        """Lease up to `limit` due items to `owner` (one short transaction)."""
        ...

    def perform(self, item: Item) -> Outcome:
        """Do the work of one item: network I/O, no database. Expected failures are outcomes."""
        ...

    def record(self, owner: str, outcomes: Sequence[Outcome]) -> int:
        """Write outcomes of items `owner` still leases, release them; return how many were written."""
        ...


class LeasedJob(Generic[Item, Outcome]):
    """A job that drains a `LeasedWork` queue through the worker's pool.

    At most 2 x `batch` items are in flight: the pool always has a batch queued while this
    thread writes the last one, and an item waits in the pool for about one item's duration, far
    less than its lease (minutes). Outcomes are written `batch` at a time. The run ends when
    nothing is due, or after a stop request once the items already claimed are recorded.
    """

    def __init__(self, name: str, every: float, work: LeasedWork[Item, Outcome], batch: int = 32) -> None:
        self.name = name
        self.every = every
        self._work = work
        self._batch = max(1, batch)

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        in_flight: set[Future[Outcome]] = set()
        outcomes: list[Outcome] = []
        exhausted = False
        while True:
            if not exhausted and len(in_flight) <= self._batch and not ctx.stopping.is_set():
                exhausted = not self._claim_more(ctx, in_flight, report)
            if not in_flight:
                break
            finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            outcomes.extend(self._collect(finished, report))
            if len(outcomes) >= self._batch or not in_flight:
                self._record(ctx.owner, outcomes, report)
                outcomes = []
        self._record(ctx.owner, outcomes, report)
        return report

    def _claim_more(self, ctx: JobContext, in_flight: set[Future[Outcome]], report: JobReport) -> bool:
        items = self._work.claim(ctx.owner, self._batch)
        report.claimed += len(items)
        in_flight.update(ctx.executor.submit(self._work.perform, item) for item in items)
        return bool(items)

    def _collect(self, finished: set[Future[Outcome]], report: JobReport) -> list[Outcome]:
        outcomes = []
        for future in finished:
            try:
                outcomes.append(future.result())
            except Exception:  # a bug, not an agent's failure: keep the lease, retry after it
                log.exception("%s: an item failed unexpectedly; it is retried when its lease expires", self.name)
                report.failed += 1
        return outcomes

    def _record(self, owner: str, outcomes: list[Outcome], report: JobReport) -> None:
        if not outcomes:
            return
        written = self._work.record(owner, outcomes)
        report.recorded += written
        report.lost += len(outcomes) - written


class PeriodicJob:
    """A job that is one function of the current time (e.g. pruning old rows).

    The function must be safe to run concurrently on several workers (idempotent deletes).
    """

    def __init__(self, name: str, every: float, action: Callable[[], int]) -> None:
        self.name = name
        self.every = every
        self._action = action

    def run(self, ctx: JobContext) -> JobReport:
        done = self._action()
        return JobReport(self.name, claimed=done, recorded=done)
