"""How deep the relay's outbox is, for the registry's status page: messages due for delivery now,
waiting (behind an earlier message of their task, or backing off), out for delivery, and
dead-lettered (kept until retention). One statement over `relay_messages`; no subscriber's URL,
token or message body is read."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import ColumnElement, Engine, case, func, or_, select

from registry.relay.models import RelayMessage as M


@dataclasses.dataclass(frozen=True)
class RelayQueueDepth:
    due: int
    waiting: int
    in_delivery: int
    dead: int
    delivered: int  # kept until retention
    last_attempt_at: dt.datetime | None


def relay_queue_depth(engine: Engine, now: dt.datetime) -> RelayQueueDepth:
    pending = M.state == "pending"
    leased = pending & (M.lease_until > now)
    due = pending & or_(M.lease_until.is_(None), M.lease_until <= now) & (M.due_at <= now)

    def counted(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    statement = select(
        counted(due),
        counted(pending),
        counted(leased),
        counted(M.state == "dead"),
        counted(M.state == "delivered"),
        func.max(M.last_attempt_at),
    )
    with engine.connect() as conn:
        row = conn.execute(statement).one()
    due_n, pending_n, leased_n, dead_n, delivered_n, last = row
    return RelayQueueDepth(
        int(due_n), int(pending_n) - int(due_n) - int(leased_n), int(leased_n), int(dead_n), int(delivered_n), last
    )
