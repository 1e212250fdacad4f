"""`/status`: the registry itself, for operators. How many agents there are by status, health and
signature state; where each scheduled job's work stands; how deep the relay's outbox is. Public and
read-only like every page: counts and times only, never a subscriber's URL or a token.

Per job: its last run as the workers record it (`registry.jobs.runs`: when, by which worker, with
what outcome; idle runs at most once a minute) and what its work leaves in the tables
(`registry.health.schedule_state`, `registry.relay.relay_queue_depth`): what is due now, what a
worker holds, when a probe, a fetch or a delivery attempt was last recorded."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from flask import current_app, render_template
from sqlalchemy import func, select

from registry.catalog import AgentQuery, Facet, TagCountDelta
from registry.db.types import utcnow
from registry.health import ScheduleState, schedule_state
from registry.jobs import JobRun, last_runs
from registry.relay import RELAY_DELIVERY, RelayQueueDepth, relay_queue_depth
from registry.schedule import (
    HEALTH_PROBE,
    MANIFEST_RECRAWL,
    PRUNE_HEALTH_CHECKS,
    PRUNE_RELAY_MESSAGES,
    RECRAWL,
    TAG_COUNTS,
    scheduled_jobs,
)
from registry.web.blueprint import bp

COUNTED = (("status", "Status"), ("health", "Health"), ("sig", "Signature"))
EVERY_AGENT = AgentQuery(status="any", include_dead=True)


@dataclasses.dataclass(frozen=True)
class JobLine:
    name: str
    every: float
    facts: list[tuple[str, Any]]  # (what, a number, a time or text)
    last: JobRun | None  # never run by a worker that records its runs


@bp.get("/status")
def status_page() -> str:
    services = current_app.extensions["agentdex"]
    now = utcnow()
    facets: dict[str, Facet] = services.search.facets(EVERY_AGENT, [kind for kind, _ in COUNTED], 20, 1)
    schedule = schedule_state(services.engine, now)
    relay = relay_queue_depth(services.engine, now)
    return render_template(
        "status.html",
        section="status",
        now=now,
        total=sum(count for _, count in facets["status"].buckets) + facets["status"].other_count,
        counts=[(title, facets[kind].buckets) for kind, title in COUNTED],
        jobs=_jobs(services, schedule, relay, _unfolded_tag_changes(services.engine)),
        relay=relay,
    )


def _jobs(services: Any, schedule: ScheduleState, relay: RelayQueueDepth, unfolded: int) -> list[JobLine]:
    facts: dict[str, list[tuple[str, Any]]] = {
        HEALTH_PROBE: [
            ("agents due for a probe", schedule.probes_due),
            ("being probed", schedule.probes_leased),
            ("last check recorded", schedule.last_probe_at),
        ],
        RECRAWL: [
            ("cards due for a fetch", schedule.crawls_due),
            ("being fetched", schedule.crawls_leased),
            ("last fetch recorded", schedule.last_crawl_at),
        ],
        PRUNE_HEALTH_CHECKS: [("oldest retained check", schedule.oldest_check_at)],
        RELAY_DELIVERY: [
            ("messages due", relay.due),
            ("out for delivery", relay.in_delivery),
            ("last attempt", relay.last_attempt_at),
        ],
        PRUNE_RELAY_MESSAGES: [("finished messages retained", relay.dead + relay.delivered)],
        TAG_COUNTS: [("tag count changes not yet folded", unfolded)],
        MANIFEST_RECRAWL: [],
    }
    runs = last_runs(services.engine)
    return [
        JobLine(job.name, job.every, facts.get(job.name, []), runs.get(job.name)) for job in scheduled_jobs(services)
    ]


def _unfolded_tag_changes(engine: Any) -> int:
    """The `tag-counts` job folds these every few seconds: a growing number means it is not running."""
    with engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(TagCountDelta)) or 0)


def status_value(value: object) -> str:
    """A fact of the status page as text: a time as people read it, "never" for none."""
    if value is None:
        return "never"
    if isinstance(value, dt.datetime):
        value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value)


bp.add_app_template_filter(status_value, "status_value")
