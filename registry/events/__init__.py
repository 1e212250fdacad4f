"""Change events: anyone with a token subscribes a webhook (`subscriptions`) to the catalog's
changes, which catalog, health and trust record in the outbox (`registry.change_events`) in the
transactions that make them; the `events-fanout` job (`fanout`) turns each into a CloudEvent
(`cloudevent`) in every matching subscriber's relay queue, and the relay delivers, retries,
dead-letters and replays them as it does push notifications, in order per agent."""

from registry.events.fanout import EVENTS_FANOUT, EventFanout
from registry.events.models import EventSubscription
from registry.events.openapi import SCHEMAS as OPENAPI_SCHEMAS
from registry.events.openapi import paths as openapi_paths
from registry.events.wiring import EventServices, build_events

__all__ = [
    "EVENTS_FANOUT",
    "OPENAPI_SCHEMAS",
    "EventFanout",
    "EventServices",
    "EventSubscription",
    "build_events",
    "openapi_paths",
]
