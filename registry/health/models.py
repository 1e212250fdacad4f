"""Keeping the catalog true: the crawl and probe schedule of each agent, its health roll-up, the
leases workers hold on it, and the individual health checks.

The schedule columns live on `agents` (`registry.catalog.models.AgentScheduleColumns`) so that claiming due work
is one indexed `UPDATE … RETURNING` on one table and search can filter on health without a join.
Each job has its own lease pair, so a crawl and a probe of the same agent may run at once while
two probes (or two crawls) never do.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime


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
