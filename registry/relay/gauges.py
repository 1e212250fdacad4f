"""The relay's scrape-time gauges: how many messages wait in the outbox, and how long the oldest
due one has waited past its due time (a delivery backlog shows here before clients complain).

Not built on `relay_queue_depth` (the status page's): that one counts every state, so it reads the
delivered and dead rows kept until retention; this one reads only the pending rows, every scrape."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from sqlalchemy import Engine, func, select

from registry.db.types import utcnow
from registry.metrics import GaugeFamily, GaugeSource
from registry.relay.models import RelayMessage

_PENDING = select(func.count(), func.min(RelayMessage.due_at)).where(RelayMessage.state == "pending")


def relay_gauges(engine: Engine, clock: Callable[[], dt.datetime] = utcnow) -> GaugeSource:
    """The gauges over `engine` (use an autocommit engine: one statement)."""

    def gauges() -> list[GaugeFamily]:
        with engine.connect() as conn:
            depth, oldest_due = conn.execute(_PENDING).one()
        now = clock()
        overdue = max(0.0, (now - oldest_due).total_seconds()) if oldest_due is not None else 0.0
        return [
            GaugeFamily("agentdex_relay_queue_depth", "Messages waiting to be delivered", (), {(): depth}),
            GaugeFamily(
                "agentdex_relay_oldest_due_message_age_seconds",
                "How long the longest-waiting due message has been due",
                (),
                {(): overdue},
            ),
        ]

    return gauges
