"""Building the change-event services (called once by `registry.container`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.db.types import utcnow
from registry.events.fanout import EVENTS_FANOUT, EventFanout
from registry.events.subscriptions import EventSubscriptions
from registry.jobs import PeriodicJob
from registry.relay import RelayServices
from registry.settings import Settings


@dataclasses.dataclass
class EventServices:
    subscriptions: EventSubscriptions
    fanout: EventFanout  # to the relay, which delivers, lists and replays the events' messages

    def fanout_job(self, settings: Settings) -> PeriodicJob:
        return PeriodicJob(EVENTS_FANOUT, settings.operations.events_tick, self.fanout.run)


def build_events(
    settings: Settings,
    engine: Engine,
    sessions: sessionmaker[Session],
    relay: RelayServices,
    *,
    clock: Callable[[], dt.datetime] = utcnow,
) -> EventServices:
    """`clock`: the relay's (a message is due when it is written)."""
    batch = settings.operations.events_batch
    fanout = EventFanout(engine, batch=batch, clock=clock, on_enqueued=relay.wakeup.notify)
    return EventServices(EventSubscriptions(sessions, relay.subscriptions), fanout)
