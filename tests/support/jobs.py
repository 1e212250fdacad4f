"""Helpers for job tests: clocks tests move by hand, and running a job like the worker does."""

from __future__ import annotations

import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor

from registry.jobs import Job, JobContext, JobReport

START = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


class Ticker:
    """A monotonic clock (seconds) tests move by hand: rate limits, caches with a TTL."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class FakeClock:
    """Stands still until `advance` is called; thread-safe."""

    def __init__(self, now: dt.datetime = START) -> None:
        self.now = now
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> dt.datetime:
        with self._lock:
            self.now += dt.timedelta(seconds=seconds)
            return self.now


def run_job(job: Job, owner: str = "test-worker", threads: int = 4) -> JobReport:
    """One run of `job` with its own small pool, as one worker would run it."""
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return job.run(JobContext(owner=owner, executor=pool))
