"""Where the health probes and card re-crawls stand, for the registry's status page: what is due
now, what a worker holds a lease on, and when the last probe and fetch were recorded: the traces
their work leaves in the tables, beside the runs the jobs record (`registry.jobs.runs`). Two
statements."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import ColumnElement, Engine, case, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute

from registry.catalog import Agent
from registry.health.service import HealthCheck


@dataclasses.dataclass(frozen=True)
class ScheduleState:
    probes_due: int
    probes_leased: int
    last_probe_at: dt.datetime | None
    oldest_check_at: dt.datetime | None  # the oldest retained check (pruning keeps the window)
    crawls_due: int
    crawls_leased: int
    last_crawl_at: dt.datetime | None


def schedule_state(engine: Engine, now: dt.datetime) -> ScheduleState:
    def counted(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    def free(lease_until: InstrumentedAttribute[dt.datetime | None]) -> ColumnElement[bool]:
        return or_(lease_until.is_(None), lease_until <= now)

    crawled = Agent.source == "crawled"
    agents = select(
        counted((Agent.next_probe_at <= now) & free(Agent.probe_lease_until)),
        counted(Agent.probe_lease_until > now),
        counted(crawled & (Agent.next_crawl_at <= now) & free(Agent.crawl_lease_until)),
        counted(Agent.crawl_lease_until > now),
        func.max(Agent.crawled_at),
    )
    checks = select(func.max(HealthCheck.checked_at), func.min(HealthCheck.checked_at))
    with engine.connect() as conn:
        probes_due, probes_leased, crawls_due, crawls_leased, last_crawl = conn.execute(agents).one()
        last_probe, oldest = conn.execute(checks).one()
    return ScheduleState(
        int(probes_due), int(probes_leased), last_probe, oldest, int(crawls_due), int(crawls_leased), last_crawl
    )
