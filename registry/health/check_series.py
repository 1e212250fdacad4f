"""An agent's retained health checks as a time series (when, outcome, latency), newest first, for
drawing: only the three columns a chart needs, the time as seconds since the epoch computed by the
database, in one statement on the `(agent_pk, checked_at)` index. A day
of checks is over a thousand rows: read whole (`HealthService.recent_checks`), with a datetime made
for each, they cost the agent page several times its other reads."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import Engine, bindparam, func, select

from registry.catalog import Agent
from registry.health.service import HealthCheck


class CheckPoint(NamedTuple):
    at: float  # seconds since the epoch
    outcome: str
    latency_ms: int | None


# Seconds since the epoch: SQLite's `EXTRACT(epoch …)` (strftime '%s') drops the fraction, so two
# checks of one probe round would share a second there.
EPOCH = {
    "sqlite": (func.julianday(HealthCheck.checked_at) - 2440587.5) * 86400.0,
    "postgresql": func.extract("epoch", HealthCheck.checked_at),
}
_SERIES = {
    dialect: select(epoch, HealthCheck.outcome, HealthCheck.latency_ms)
    .join(Agent, Agent.pk == HealthCheck.agent_pk)
    .where(Agent.id == bindparam("agent_id"))
    .order_by(HealthCheck.checked_at.desc(), HealthCheck.id.desc())
    .limit(bindparam("limit"))
    for dialect, epoch in EPOCH.items()
}


def check_series(engine: Engine, agent_id: str, limit: int) -> list[CheckPoint]:
    """The agent's latest `limit` checks, newest first ([] for an unknown agent)."""
    with engine.connect() as conn:
        rows = conn.execute(
            _SERIES[engine.dialect.name], {"agent_id": agent_id, "limit": limit}
        ).all()  # one fetch, not one per row
        return [CheckPoint(float(at), outcome, latency) for at, outcome, latency in rows]
