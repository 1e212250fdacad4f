"""The worker: APScheduler ticks the jobs, a job still running skips its tick, leased work that
fails keeps its lease, and two `agentdex worker` processes never probe the same agent twice."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import func, select

from registry.jobs import JobContext, JobReport, LeasedJob
from registry.jobs.worker import Worker
from registry.schema import HealthCheck
from tests.support.a2a_agents import TASK_NOT_FOUND, PlainAgent
from tests.support.cards import make_card

AGENTDEX = Path(sys.executable).parent / "agentdex"


class RecordingJob:
    def __init__(self, name: str = "recording", every: float = 3600) -> None:
        self.name = name
        self.every = every
        self.ran = threading.Event()
        self.release = threading.Event()
        self.runs = 0

    def run(self, ctx: JobContext) -> JobReport:
        self.runs += 1
        self.ran.set()
        self.release.wait(10)
        return JobReport(self.name)


class MemoryQueue:
    """A LeasedWork over a list: items 0..n-1, item 3 blows up."""

    def __init__(self, size: int) -> None:
        self.due = list(range(size))
        self.leased: set[int] = set()
        self.recorded: list[int] = []

    def claim(self, owner: str, limit: int) -> Sequence[int]:
        taken, self.due = self.due[:limit], self.due[limit:]
        self.leased.update(taken)
        return taken

    def perform(self, item: int) -> int:
        if item == 3:
            raise RuntimeError("a bug in the job")
        return item * 10

    def record(self, owner: str, outcomes: Sequence[int]) -> int:
        self.recorded.extend(outcomes)
        self.leased.difference_update(o // 10 for o in outcomes)
        return len(outcomes)


def test_the_scheduler_ticks_a_job_right_away_and_stops_cleanly():
    job = RecordingJob()
    worker = Worker([job], threads=2)
    worker.start()
    try:
        assert job.ran.wait(10)  # the first tick is immediate
    finally:
        job.release.set()
        worker.stop()
    assert worker.context.stopping.is_set() and job.runs == 1


def test_a_tick_while_the_job_still_runs_is_skipped():
    job = RecordingJob()
    worker = Worker([job], threads=2)
    first = threading.Thread(target=worker._tick, args=[job])
    first.start()
    assert job.ran.wait(10)
    worker._tick(job)  # returns at once: the run above holds the job
    job.release.set()
    first.join()
    worker.stop()
    assert job.runs == 1


def test_a_leased_job_drains_the_queue_and_keeps_the_lease_of_a_failed_item():
    queue = MemoryQueue(10)
    worker = Worker([LeasedJob("memory", 1, queue, batch=4)], threads=3)
    (report,) = worker.run_once()
    worker.stop()
    assert (report.claimed, report.recorded, report.failed, report.lost) == (10, 9, 1, 0)
    assert sorted(queue.recorded) == [i * 10 for i in range(10) if i != 3]
    assert queue.leased == {3}  # retried once its lease expires


def test_two_worker_processes_probe_every_agent_exactly_once(services, writer_token, database_url):
    actor = services.tokens.authenticate(writer_token)
    agent = PlainAgent(TASK_NOT_FOUND)
    try:
        for i in range(40):
            card = make_card(f"Agent {i}", url=agent.rpc_url)
            services.catalog.register_card(actor, card, f"{agent.base_url}/{i}/agent-card.json")
        env = {
            **os.environ,
            "AGENTDEX_DATABASE_URL": database_url,
            "AGENTDEX_SECRET_KEY": "x" * 32,
            "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8",
            "AGENTDEX_ALLOW_HTTP": "true",
            "AGENTDEX_WORKER_THREADS": "4",
            "AGENTDEX_HEALTH_TIMEOUT": "2",
        }
        command = [str(AGENTDEX), "worker", "--once", "--job", "health-probe"]
        workers = [
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        outputs = [w.communicate(timeout=120) for w in workers]
    finally:
        agent.stop()
    assert [w.returncode for w in workers] == [0, 0], outputs
    recorded = [int(out.split("recorded ")[1].split(",")[0]) for out, _ in outputs]
    assert sum(recorded) == 40, recorded
    with services.engine.connect() as conn:
        per_agent = conn.execute(select(HealthCheck.agent_pk, func.count()).group_by(HealthCheck.agent_pk)).all()
    assert len(per_agent) == 40 and {count for _, count in per_agent} == {1}
    assert len(agent.requests) == 40
