"""The worker: one lease-owner id, one bounded thread pool, and APScheduler ticking the jobs.

APScheduler only decides *when* a job runs; the database decides *what* it does (leases). A job
whose previous run is still going skips the tick instead of queueing behind it. The same worker
runs inside `agentdex serve` and as `agentdex worker`; together its jobs make at most `threads`
outbound calls at once.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from apscheduler.schedulers.background import BackgroundScheduler

from registry.jobs.base import Job, JobContext, JobReport
from registry.jobs.runs import NO_JOB_RUNS, JobRunLog, RunRecord
from registry.metrics import NULL_METRICS, Metrics

log = logging.getLogger(__name__)


class Worker:
    def __init__(
        self, jobs: Sequence[Job], *, threads: int, metrics: Metrics = NULL_METRICS, runs: JobRunLog = NO_JOB_RUNS
    ) -> None:
        """`runs` keeps each job's last run where every process can read it (`registry.jobs.runs`)."""
        self.jobs = list(jobs)
        self._metrics = metrics
        self._runs = runs
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="agentdex-job")
        # The lease owner says which process holds a lease: host, pid and a nonce.
        owner = f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.context = JobContext(owner=owner, executor=self._pool)
        self._running = {job.name: threading.Lock() for job in self.jobs}
        self._scheduler: BackgroundScheduler | None = None

    def run_once(self) -> list[JobReport]:
        """Run each job once, in order, until nothing is due."""
        reports = []
        for job in self.jobs:
            with self._running[job.name]:
                reports.append(self._run(job))
        return reports

    def start(self) -> None:
        """Tick every job in the background, the first time right away."""
        scheduler = BackgroundScheduler(timezone="UTC", job_defaults={"coalesce": True, "max_instances": 3})
        now = dt.datetime.now(dt.UTC)
        for job in self.jobs:
            scheduler.add_job(
                self._tick, "interval", seconds=job.every, args=[job], id=job.name, name=job.name, next_run_time=now
            )
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

    def _tick(self, job: Job) -> None:
        lock = self._running[job.name]
        if not lock.acquire(blocking=False):
            return  # the previous run is still draining the queue
        try:
            report = self._run(job)
            if report.claimed or report.failed:
                log.info("%s", report)
        except Exception:  # a database outage must not kill the scheduler thread
            log.exception("job %s failed; it runs again on the next tick", job.name)
        finally:
            lock.release()

    def _run(self, job: Job) -> JobReport:
        started, outcome, report = time.perf_counter(), "error", JobReport(job.name)
        try:
            report = job.run(self.context)
            outcome = "failed_items" if report.failed else "ok"
            return report
        finally:
            seconds = time.perf_counter() - started
            self._metrics.job_run(job.name, outcome, seconds)
            self._record(RunRecord(job.name, self.context.owner, outcome, seconds, report.claimed, report.failed))

    def _record(self, run: RunRecord) -> None:
        try:
            self._runs.record(run)
        except Exception:  # the run's own outcome stands; a database outage is logged by the next tick too
            log.exception("could not record the run of job %s", run.job)
