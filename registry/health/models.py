"""Keeping the catalog true: the crawl and probe schedule of each agent, its health roll-up, the
leases workers hold on it, and the individual health checks.

The schedule columns live on `agents` (through `AgentScheduleColumns`) so that claiming due work
is one indexed `UPDATE … RETURNING` on one table and search can filter on health without a join.
Each job has its own lease pair, so a crawl and a probe of the same agent may run at once while
two probes (or two crawls) never do.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

# New agents are due at once: the epoch sorts before any clock, on every backend, and keeps the
# "due" predicate a plain index range (`next_probe_at <= now`) instead of `IS NULL OR …`.
EPOCH_DEFAULT = text("'1970-01-01 00:00:00'")
HEALTH_STATES = ("unknown", "up", "degraded", "down")


class AgentScheduleColumns:
    """Columns of `agents` that the worker jobs own (mixed into `Agent`)."""

    # -- health probe ---------------------------------------------------------------------
    next_probe_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), server_default=EPOCH_DEFAULT, index=True)
    probe_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    probe_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_state: Mapped[str] = mapped_column(String(10), server_default=text("'unknown'"), index=True)
    health_since: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_checked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    health_reason: Mapped[str | None] = mapped_column(String(40), nullable=True)
    health_successes: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    health_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    health_uptime24h: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Hourly [hour, alive rounds, rounds] buckets of the last 24 hours: uptime without a scan.
    health_window: Mapped[list[list[int]] | None] = mapped_column(JSON, nullable=True)

    # -- re-crawl -------------------------------------------------------------------------
    next_crawl_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), server_default=EPOCH_DEFAULT, index=True)
    crawl_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    crawl_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawl_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    crawl_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    crawl_etag: Mapped[str | None] = mapped_column(String(500), nullable=True)
    crawl_last_modified: Mapped[str | None] = mapped_column(String(100), nullable=True)


class HealthCheck(Base):
    """One probe of one JSON-RPC interface of an agent. Pruned after the retention period."""

    __tablename__ = "health_checks"
    __table_args__ = (Index("ix_health_checks_agent_recent", "agent_pk", "checked_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_pk: Mapped[int] = mapped_column(ForeignKey("agents.pk", ondelete="CASCADE"))
    checked_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
    interface_url: Mapped[str] = mapped_column(String(2048))
    protocol_version: Mapped[str | None] = mapped_column(String(20), nullable=True)
    method: Mapped[str] = mapped_column(String(20))
    outcome: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str] = mapped_column(String(40))
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    http_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rpc_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detail: Mapped[str | None] = mapped_column(String(500), nullable=True)
