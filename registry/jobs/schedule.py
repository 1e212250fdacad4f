"""The one list of scheduled jobs. To add a job, append it to `scheduled_jobs` (see the package
docstring of `registry.jobs`); `agentdex worker` and `agentdex serve` both run this list."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from registry.jobs.base import Job, LeasedJob, PeriodicJob
from registry.catalog.planner_statistics import PlannerStatistics
from registry.catalog.tag_counts import FOLD_EVERY

if TYPE_CHECKING:
    from registry.container import Services

HEALTH_PROBE = "health-probe"
RECRAWL = "recrawl"
PRUNE_HEALTH_CHECKS = "prune-health-checks"
RELAY_DELIVERY = "relay-delivery"  # registry.relay.job.RELAY_DELIVERY
PRUNE_RELAY_MESSAGES = "prune-relay-messages"
CATALOG_STATISTICS = "catalog-statistics"
TAG_COUNTS = "tag-counts"
JOB_NAMES = (HEALTH_PROBE, RECRAWL, PRUNE_HEALTH_CHECKS, RELAY_DELIVERY, PRUNE_RELAY_MESSAGES, CATALOG_STATISTICS,
             TAG_COUNTS)
PRUNE_EVERY = 600.0
STATISTICS_EVERY = 10.0


def scheduled_jobs(services: Services) -> list[Job]:
    """Every job the worker runs, built from the wired services."""
    worker = services.settings.worker
    return [
        LeasedJob(HEALTH_PROBE, worker.tick, services.health, batch=2 * worker.threads),
        LeasedJob(RECRAWL, worker.tick, services.crawler, batch=2 * worker.threads),
        PeriodicJob(PRUNE_HEALTH_CHECKS, PRUNE_EVERY, services.health.prune),
        services.relay.delivery_job(services.settings),
        PeriodicJob(PRUNE_RELAY_MESSAGES, PRUNE_EVERY, services.relay.operations.prune),
        PeriodicJob(CATALOG_STATISTICS, STATISTICS_EVERY, PlannerStatistics(services.engine).refresh),
        PeriodicJob(TAG_COUNTS, FOLD_EVERY, functools.partial(services.catalog.tag_counts.fold, services.engine)),
    ]
