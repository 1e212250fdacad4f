"""The push relay: a client subscribes (`subscriptions`) and gives the agent a relay URL and secret
as its push config (A2A v0.3 §6.8, v1.0 §3.1.7); the agent POSTs there (`api_ingress`, `ingress`);
the `relay-delivery` job (`job`, `outbox`, `delivery`) forwards each message to the client's webhook
in order per task; `operations` lists and replays messages."""

from registry.relay.agent_jwt import card_key_sources
from registry.relay.errors import InvalidNotification, PushNotSupported, RelayError, ReplayedNotification, TaskMismatch
from registry.relay.job import RELAY_DELIVERY
from registry.relay.models import RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.openapi import SCHEMAS as OPENAPI_SCHEMAS
from registry.relay.openapi import paths as openapi_paths
from registry.relay.wiring import RelayServices, build_relay, relay_policy

__all__ = [
    "OPENAPI_SCHEMAS",
    "RELAY_DELIVERY",
    "InvalidNotification",
    "PushNotSupported",
    "RelayAttempt",
    "RelayError",
    "RelayMessage",
    "RelayServices",
    "RelaySubscription",
    "ReplayedNotification",
    "TaskMismatch",
    "build_relay",
    "card_key_sources",
    "openapi_paths",
    "relay_policy",
]
