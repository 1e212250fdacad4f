"""The worker: one lease-owner id, one bounded thread pool, and APScheduler ticking the jobs.

APScheduler only decides *when* a job runs; the database decides *what* it does (leases). A job
whose previous run is still going skips the tick instead of queueing behind it. The same worker
runs inside `agentdex serve` (embedded default) and as `agentdex worker` (scaled out).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

from apscheduler.schedulers.background import BackgroundScheduler

from registry.jobs.base import Job, JobContext, JobReport

log = logging.getLogger(__name__)


def worker_id() -> str:
    """A lease owner name that says which process holds a lease (host, pid, and a nonce)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Worker:
    """Runs `jobs` on their ticks with at most `threads` outbound calls at once."""

    def __init__(self, jobs: Sequence[Job], *, threads: int, owner: str | None = None) -> None:
        self.jobs = list(jobs)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="agentdex-job")
        self.context = JobContext(owner=owner or worker_id(), executor=self._pool)
        self._running = {job.name: threading.Lock() for job in self.jobs}
        self._scheduler: BackgroundScheduler | None = None

    def run_once(self, names: Sequence[str] | None = None) -> list[JobReport]:
        """Run each job (or the named ones) once, in order, until nothing is due."""
        return [self._run(job) for job in self.jobs if names is None or job.name in names]

    def start(self) -> None:
        """Tick every job in the background, the first time right away."""
        scheduler = BackgroundScheduler(timezone="UTC", job_defaults={"coalesce": True, "max_instances": 3})
        for job in self.jobs:
            scheduler.add_job(self._tick, "interval", seconds=job.every, args=[job], id=job.name, name=job.name,
                              next_run_time=dt.datetime.now(dt.UTC))
        scheduler.start()
        self._scheduler = scheduler
        log.info("worker %s started: %s", self.context.owner, ", ".join(j.name for j in self.jobs))

    def stop(self, wait: bool = True) -> None:
        """Stop claiming, let runs record what they claimed, then stop the pool."""
        self.context.stopping.set()
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=wait)
            self._scheduler = None
        self._pool.shutdown(wait=wait, cancel_futures=not wait)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _tick(self, job: Job) -> None:
        lock = self._running[job.name]
        if not lock.acquire(blocking=False):
            return  # the previous run is still draining the queue
        try:
            report = job.run(self.context)
            if report.claimed or report.failed:
                log.info("%s", report)
        except Exception:  # a database outage must not kill the scheduler thread
            log.exception("job %s failed; it runs again on the next tick", job.name)
        finally:
            lock.release()

    def _run(self, job: Job) -> JobReport:
        with self._running[job.name]:
            return job.run(self.context)
