"""The one list of scheduled jobs, built from the wired services. To add a job, append it to
`scheduled_jobs` (see the package docstring of `registry.jobs`); `agentdex worker` and `agentdex
serve` both run this list. It knows every domain, so it sits on top, beside the container."""

from __future__ import annotations

from registry.container import Services
from registry.events import EVENTS_FANOUT
from registry.jobs import DatabaseJobRuns, Job, LeasedJob, PeriodicJob
from registry.jobs.worker import Worker
from registry.ownership import DOMAIN_RECHECK
from registry.relay import RELAY_DELIVERY

HEALTH_PROBE = "health-probe"
RECRAWL = "recrawl"
PRUNE_HEALTH_CHECKS = "prune-health-checks"
PRUNE_RELAY_MESSAGES = "prune-relay-messages"
TAG_COUNTS = "tag-counts"
MANIFEST_RECRAWL = "manifest-recrawl"
JOB_NAMES = (
    HEALTH_PROBE,
    RECRAWL,
    PRUNE_HEALTH_CHECKS,
    RELAY_DELIVERY,
    PRUNE_RELAY_MESSAGES,
    TAG_COUNTS,
    MANIFEST_RECRAWL,
    EVENTS_FANOUT,
    DOMAIN_RECHECK,
)
PRUNE_EVERY = 600.0
TAG_COUNTS_EVERY = 2.0  # with nothing to fold, a fold is one read of an empty table


def scheduled_jobs(services: Services) -> list[Job]:
    """Every job the worker runs, built from the wired services."""
    worker, ownership = services.settings.worker, services.settings.ownership
    return [
        LeasedJob(HEALTH_PROBE, worker.tick, services.health, batch=2 * worker.threads),
        LeasedJob(RECRAWL, worker.tick, services.crawler, batch=2 * worker.threads),
        PeriodicJob(PRUNE_HEALTH_CHECKS, PRUNE_EVERY, services.health.prune),
        services.relay.delivery_job(services.settings),
        PeriodicJob(PRUNE_RELAY_MESSAGES, PRUNE_EVERY, services.relay.operations.prune),
        PeriodicJob(TAG_COUNTS, TAG_COUNTS_EVERY, services.catalog.fold_tag_counts),
        # A domain's crawl fetches many cards itself: a few at a time.
        LeasedJob(MANIFEST_RECRAWL, worker.tick, services.manifest_crawl.recrawl, batch=2),
        services.events.fanout_job(services.settings),
        LeasedJob(DOMAIN_RECHECK, worker.tick, services.domains.recheck, batch=ownership.recheck_batch),
    ]


def job_worker(services: Services, jobs: list[Job]) -> Worker:
    """The worker that runs `jobs` (`agentdex worker`, and `agentdex serve` beside the web threads):
    bounded by AGENTDEX_WORKER_THREADS, counting runs in the metrics, recording each job's last run."""
    threads = services.settings.worker.threads
    return Worker(jobs, threads=threads, metrics=services.metrics, runs=DatabaseJobRuns(services.engine))
