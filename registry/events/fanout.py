"""The `events-fanout` job: from the change-event outbox to each matching subscriber's relay queue.

One transaction takes the oldest events off `change_events` (DELETE … RETURNING, so no event is
taken twice), writes a relay message per matching subscription, and commits: a crash before the
commit leaves the events to the next run, after it they are the relay's to deliver (at least
once, with retries, dead letters and replay). Fan-outs run one at a time (SQLite's single writer;
a PostgreSQL advisory lock, skipped when another worker holds it): each takes events in the order
they were numbered, and an agent's events are numbered in the order its changes committed
(`registry.change_events`), so its messages enter each subscriber's queue in order, under the
agent's id as the relay's task, which the relay delivers in order.

A subscription receives what is fanned out after it was created: every change committed after
it, and possibly changes of the last moments before (still in the outbox then).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Row, delete, select, text

from registry.auth import Principal
from registry.change_events import ChangeEvent
from registry.db import DriverStatement, writer_lock
from registry.db.types import utcnow
from registry.events.cloudevent import cloudevent_body
from registry.events.models import EventSubscription
from registry.relay import RelaySubscription, message_insert

EVENTS_FANOUT = "events-fanout"
MESSAGE_KIND = "cloudevent"  # relay_messages.kind: delivered as application/cloudevents+json
E, S, ES = ChangeEvent, RelaySubscription, EventSubscription
# Any fixed number: the key of the PostgreSQL advisory lock one fan-out at a time holds.
FANOUT_LOCK = 0x61_64_78_65_76  # "adxev"
_TRY_LOCK = text("SELECT pg_try_advisory_xact_lock(:key)")
_RETURNED = (E.pk, E.id, E.type, E.agent_id, E.at, E.data)


@dataclasses.dataclass(frozen=True)
class Follower:
    """An event subscription as the fan-out matches it."""

    pk: int
    types: frozenset[str]
    tags: frozenset[str]
    owner_id: int | None
    source: str

    def wants(self, event: Row[Any]) -> bool:
        data = event.data
        if event.type not in self.types or (self.owner_id is not None and data.get("ownerId") != self.owner_id):
            return False
        return not self.tags or not self.tags.isdisjoint(data.get("tags") or ())


class EventFanout:
    def __init__(
        self,
        engine: Engine,
        *,
        batch: int = 500,
        clock: Callable[[], dt.datetime] = utcnow,
        on_enqueued: Callable[[], None] = lambda: None,
    ) -> None:
        """`on_enqueued`: wakes this process's relay delivery (other processes hear the database)."""
        self._engine = engine
        self._writer = writer_lock(engine)
        self._batch = batch
        self._clock = clock
        self._on_enqueued = on_enqueued
        self._insert = DriverStatement(message_insert(engine.dialect.name))

    def run(self) -> int:
        """Fan out everything in the outbox, a batch per transaction; how many events were taken."""
        total = 0
        while True:
            taken, enqueued = self._fan_out_batch()
            total += taken
            if enqueued:
                self._on_enqueued()
            if taken < self._batch:
                return total

    def _fan_out_batch(self) -> tuple[int, int]:
        with self._writer.hold(), self._engine.begin() as conn:
            if conn.dialect.name == "postgresql" and not conn.scalar(_TRY_LOCK, {"key": FANOUT_LOCK}):
                return 0, 0  # another worker is fanning out; the next tick looks again
            oldest = select(E.pk).order_by(E.pk).limit(self._batch).scalar_subquery()
            events = sorted(conn.execute(delete(E).where(E.pk.in_(oldest)).returning(*_RETURNED)), key=_pk)
            if not events:
                return 0, 0
            rows = self._messages(conn, events, _followers(conn))
            if rows:
                self._insert.execute_many(conn, rows)
        return len(events), len(rows)

    def _messages(
        self, conn: Connection, events: Sequence[Row[Any]], followers: list[Follower]
    ) -> list[dict[str, Any]]:
        now = self._clock()
        wanted = [(event, follower) for event in events for follower in followers if follower.wants(event)]
        owners = _owner_names(conn, {event.data.get("ownerId") for event, _ in wanted})
        return [
            {
                "b_id": "msg_" + uuid.uuid4().hex,
                "b_subscription_pk": follower.pk,
                "b_task_key": event.agent_id,  # the relay's order: per agent
                "b_kind": MESSAGE_KIND,
                "b_body": cloudevent_body(
                    event.id,
                    event.type,
                    event.agent_id,
                    event.at,
                    event.data,
                    source=follower.source,
                    owner=owners.get(event.data.get("ownerId")),
                ),
                "b_jti": None,
                "b_received_at": now,
                "b_due": now,
            }
            for event, follower in wanted
        ]


def _pk(row: Row[Any]) -> int:
    return int(row.pk)


def _followers(conn: Connection) -> list[Follower]:
    """Every event subscription not deleted (a disabled one keeps its messages until enabled again)."""
    stmt = select(ES.pk, ES.types, ES.tags, ES.owner_id, ES.source).join(S, S.pk == ES.pk).where(S.status != "deleted")
    return [
        Follower(row.pk, frozenset(row.types), frozenset(row.tags), row.owner_id, row.source)
        for row in conn.execute(stmt)
    ]


def _owner_names(conn: Connection, ids: set[Any]) -> dict[int, str]:
    ids.discard(None)
    if not ids:
        return {}
    rows = conn.execute(select(Principal.id, Principal.name).where(Principal.id.in_(ids)))
    return {row.id: row.name for row in rows}
