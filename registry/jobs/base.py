"""The job framework: what a job is, what it is given, and the leased-work loop most jobs are.

A `Job` is anything with a `name`, a tick period `every` and `run(ctx)`. APScheduler only calls
`run` on each tick; the job asks the database what is due. Most jobs are `LeasedJob`s: they
claim due rows with a lease (`registry.jobs.leases`), do the slow part (network I/O) in the
worker's bounded thread pool with no database transaction open, then record the results in one
short transaction, but only for rows whose lease they still hold.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Generic, Protocol, TypeVar

log = logging.getLogger(__name__)
RECORD_LINGER = 0.05  # seconds an outcome may wait for others to be written with it

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


class WorkNews(Protocol):
    """Announcements that new work may be due (e.g. the relay's wake-ups)."""

    def listening(self, callback: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """Call `callback` on every announcement while the context is open."""
        ...

    def take(self) -> bool:
        """Clear the announcements so far; True if there was one."""
        ...


class _Progress:
    """What a run waits for: an item finished, or new work was announced."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._finished: list[Future[Any]] = []
        self._announced = False

    def finish(self, future: Future[Any]) -> None:
        with self._cond:
            self._finished.append(future)
            self._cond.notify()

    def announce(self) -> None:
        with self._cond:
            self._announced = True
            self._cond.notify()

    def forget_announcements(self) -> None:
        with self._cond:
            self._announced = False

    def wait(self, timeout: float | None) -> tuple[list[Future[Any]], bool]:
        """The items finished since the last call (waiting for one, an announcement or `timeout`)."""
        with self._cond:
            self._cond.wait_for(lambda: self._finished or self._announced, timeout)
            finished, self._finished = self._finished, []
            announced, self._announced = self._announced, False
        return finished, announced


class LeasedJob(Generic[Item, Outcome]):
    """A job that drains a `LeasedWork` queue through the worker's pool.

    The run claims `batch` items, hands each to the pool, and claims again as items finish (and,
    given `WorkNews`, as soon as new work is announced), so one slow item (a target that takes its
    whole timeout) never holds up the others. Outcomes are written on a recorder thread of the
    job's own while claiming goes on, once they fill a batch, nothing else is in flight, or the
    first has waited `linger` (so a hanging item delays no record, and a busy queue is still
    written in batches: each record costs several round trips whatever its size). At most `batch` items are claimed and not yet recorded when a claim is made, so at most
    2 x `batch` in all, each waiting in the pool about one item's duration, far less than its
    lease (minutes). The run ends when nothing is due and all is recorded, or after a stop request
    once the items already claimed are recorded.
    """

    def __init__(self, name: str, every: float, work: LeasedWork[Item, Outcome], batch: int = 32,
                 linger: float = RECORD_LINGER, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.every = every
        self._work = work
        self._batch = max(1, batch)
        self._linger = linger
        self._monotonic = monotonic
        self._recorder = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"agentdex-{name}-record")

    def run(self, ctx: JobContext, news: WorkNews | None = None) -> JobReport:
        """`news`, when given, announces work that became due during the run: it is claimed at
        once, beside the items in flight, instead of after they are all recorded."""
        report = JobReport(self.name)
        progress = _Progress()
        with news.listening(progress.announce) if news is not None else contextlib.nullcontext():
            self._drive(ctx, news, progress, report)
        return report

    def _drive(self, ctx: JobContext, news: WorkNews | None, progress: _Progress, report: JobReport) -> None:
        in_flight: set[Future[Any]] = set()
        outcomes: list[Outcome] = []
        first_outcome_at = 0.0
        recording: tuple[Future[int], int] | None = None  # the batch being written, and its size
        exhausted = False
        while True:
            unrecorded = len(in_flight) + len(outcomes) + (recording[1] if recording else 0)
            if not exhausted and unrecorded <= self._batch and not ctx.stopping.is_set():
                if news is not None:  # what was announced so far is committed: this claim sees it
                    news.take()
                    progress.forget_announcements()
                exhausted = not self._claim_more(ctx, in_flight, report, progress)
            wait = self._until_recorded(outcomes, in_flight, first_outcome_at)
            if recording is None and wait == 0:
                recording, outcomes = (self._record_behind(ctx.owner, outcomes, progress), len(outcomes)), []
            if not in_flight and recording is None:
                return
            finished, announced = progress.wait(wait if recording is None else None)
            exhausted = exhausted and not announced
            if recording is not None and recording[0] in finished:
                finished.remove(recording[0])
                self._count(recording, report)
                recording = None
            in_flight.difference_update(finished)
            if finished and not outcomes:
                first_outcome_at = self._monotonic()
            outcomes.extend(self._collect(finished, report))

    def _until_recorded(self, outcomes: list[Outcome], in_flight: set[Future[Any]], first_outcome_at: float) -> float | None:
        """Seconds until `outcomes` are due to be written: 0 once they fill a batch, nothing else is
        in flight, or the first has waited `linger` (what a record frees may be the next item of a
        sequence); None when there is nothing to write."""
        if not outcomes:
            return None
        if len(outcomes) >= self._batch or not in_flight:
            return 0.0
        return max(0.0, first_outcome_at + self._linger - self._monotonic())

    def _record_behind(self, owner: str, outcomes: list[Outcome], progress: _Progress) -> Future[int]:
        """Write `outcomes` on the recorder thread while this one goes on claiming; whatever
        finishes meanwhile is written by the next call, so batches grow with the load."""
        future = self._recorder.submit(self._work.record, owner, outcomes)
        future.add_done_callback(progress.finish)
        return future

    @staticmethod
    def _count(recording: tuple[Future[int], int], report: JobReport) -> None:
        future, sent = recording
        written = future.result()
        report.recorded += written
        report.lost += sent - written

    def _claim_more(self, ctx: JobContext, in_flight: set[Future[Outcome]], report: JobReport, progress: _Progress) -> bool:
        items = self._work.claim(ctx.owner, self._batch)
        report.claimed += len(items)
        for item in items:
            future = ctx.executor.submit(self._work.perform, item)
            in_flight.add(future)
            future.add_done_callback(progress.finish)
        return bool(items)

    def _collect(self, finished: list[Future[Outcome]], report: JobReport) -> list[Outcome]:
        outcomes = []
        for future in finished:
            try:
                outcomes.append(future.result())
            except Exception:  # a bug, not an agent's failure: keep the lease, retry after it
                log.exception("%s: an item failed unexpectedly; it is retried when its lease expires", self.name)
                report.failed += 1
        return outcomes


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
