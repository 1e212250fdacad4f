"""The job framework: what a job is, what it is given, and the leased-work loop most jobs are.
A `Job` has a `name`, a tick period `every` and `run(ctx)`; on each tick it asks the database
what is due."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Any, Generic, Protocol, TypeVar

from registry.observability import job_span

log = logging.getLogger(__name__)
STRAGGLER_AFTER = 0.5  # seconds out after which an item no longer holds its pass (see LeasedJob)
MAX_PASSES = 1_000  # per run; the next tick goes on

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

    def perform(self, item: Item) -> Outcome:
        """Do the work of one item: network I/O, no database. Expected failures are outcomes."""

    def record(self, owner: str, outcomes: Sequence[Outcome]) -> int:
        """Write outcomes of items `owner` still leases, release them; return how many were written."""


class WorkNews(Protocol):
    """Announcements that new work may be due (e.g. the relay's wake-ups)."""

    def listening(self, callback: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """Call `callback` on every announcement while the context is open."""

    def take(self) -> None:
        """Clear the announcements so far (the caller is about to look at what they announced)."""


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
    """A job that drains a `LeasedWork` queue through the worker's pool, in passes.

    A pass claims what is due (`batch` at a time, again as items finish, until a claim finds
    nothing), waits for its items and writes their outcomes in one short transaction. An item
    still out `STRAGGLER_AFTER` seconds after its claim (a target that takes its whole timeout) no
    longer holds its pass: its outcome is written with a later one. While only such items are
    out, work that `WorkNews` announces is claimed at once. The run ends when nothing is due and
    every outcome is written (or after `MAX_PASSES`), or on a stop request once what was claimed
    is written.
    """

    def __init__(
        self,
        name: str,
        every: float,
        work: LeasedWork[Item, Outcome],
        batch: int = 32,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.every = every
        self._work = work
        self._batch = max(1, batch)
        self._monotonic = monotonic

    def run(self, ctx: JobContext, news: WorkNews | None = None) -> JobReport:
        report = JobReport(self.name)
        progress = _Progress()
        with job_span(self.name) as span:
            with news.listening(progress.announce) if news is not None else contextlib.nullcontext():
                self._drive(ctx, news, progress, report)
            describe_run(span, report)
        return report

    def _drive(self, ctx: JobContext, news: WorkNews | None, progress: _Progress, report: JobReport) -> None:
        in_flight: dict[Future[Outcome], float] = {}  # → when it was claimed
        outcomes: list[Outcome] = []
        exhausted = in_pass = False
        passes = 0
        while True:
            if not exhausted and len(in_flight) <= self._batch and not ctx.stopping.is_set():
                if news is not None:  # what was announced so far is committed: this claim sees it
                    news.take()
                    progress.forget_announcements()
                exhausted = not self._claim_more(ctx, in_flight, report, progress)
                in_pass = in_pass or not exhausted
            pass_ends_in = self._pass_ends_in(in_flight)
            pass_over = pass_ends_in == 0
            if outcomes and (pass_over or len(outcomes) >= self._batch):
                written = self._work.record(ctx.owner, outcomes)
                report.recorded += written
                report.lost += len(outcomes) - written
                outcomes = []
            if pass_over and in_pass:  # the next pass: what the record made due, and what came meanwhile
                passes += 1
                exhausted, in_pass = passes >= MAX_PASSES, False  # a bound against a bug that never drains
                continue
            if not in_flight:
                return
            finished, announced = progress.wait(None if pass_over else pass_ends_in)
            exhausted = exhausted and not (announced and pass_over)
            for future in finished:
                del in_flight[future]
            outcomes.extend(self._collect(finished, report))

    def _pass_ends_in(self, in_flight: dict[Future[Outcome], float]) -> float:
        """Seconds until every item out is a straggler (0: the pass is over)."""
        if not in_flight:
            return 0.0
        return max(0.0, max(in_flight.values()) + STRAGGLER_AFTER - self._monotonic())

    def _claim_more(
        self, ctx: JobContext, in_flight: dict[Future[Outcome], float], report: JobReport, progress: _Progress
    ) -> bool:
        items = self._work.claim(ctx.owner, self._batch)
        report.claimed += len(items)
        now = self._monotonic()
        for item in items:
            # In a copy of this thread's context: the item's outbound calls are children of the run's span.
            future = ctx.executor.submit(contextvars.copy_context().run, self._work.perform, item)
            in_flight[future] = now
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
    """A job that is one function of the current time (e.g. pruning old rows), safe to run
    on several workers at once (idempotent deletes)."""

    def __init__(self, name: str, every: float, action: Callable[[], int]) -> None:
        self.name = name
        self.every = every
        self._action = action

    def run(self, ctx: JobContext) -> JobReport:
        with job_span(self.name) as span:
            report = JobReport(self.name, claimed=(done := self._action()), recorded=done)
            describe_run(span, report)
        return report


def describe_run(span: Any, report: JobReport) -> None:
    """What the run did, on its span (a no-op span when tracing is off)."""
    for field in ("claimed", "recorded", "failed", "lost"):
        span.set_attribute(f"agentdex.job.{field}", getattr(report, field))
