"""The push relay: a client subscribes (`subscriptions`) and gives the agent a relay URL and secret
as its push config (A2A v0.3 §6.8, v1.0 §3.1.7); the agent POSTs there (`api_ingress`, `ingress`);
the `relay-delivery` job (`job`, `outbox`, `delivery`) forwards each message to the client's webhook
in order per task; `operations` lists and replays messages."""

from registry.relay.agent_jwt import card_key_sources
from registry.relay.api import message_detail_json, message_json
from registry.relay.errors import InvalidNotification, PushNotSupported, RelayError, ReplayedNotification, TaskMismatch
from registry.relay.gauges import relay_gauges
from registry.relay.ingress import message_insert
from registry.relay.job import RELAY_DELIVERY
from registry.relay.models import MESSAGE_STATES, RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.openapi import SCHEMAS as OPENAPI_SCHEMAS
from registry.relay.openapi import paths as openapi_paths
from registry.relay.queue_depth import RelayQueueDepth, relay_queue_depth
from registry.relay.subscriptions import SubscriptionRequest, SubscriptionService
from registry.relay.wiring import RelayServices, build_relay, relay_policy

__all__ = [
    "MESSAGE_STATES",
    "OPENAPI_SCHEMAS",
    "RELAY_DELIVERY",
    "InvalidNotification",
    "PushNotSupported",
    "RelayAttempt",
    "RelayError",
    "RelayMessage",
    "RelayQueueDepth",
    "RelayServices",
    "RelaySubscription",
    "ReplayedNotification",
    "SubscriptionRequest",
    "SubscriptionService",
    "TaskMismatch",
    "build_relay",
    "card_key_sources",
    "message_detail_json",
    "message_insert",
    "message_json",
    "openapi_paths",
    "relay_gauges",
    "relay_policy",
    "relay_queue_depth",
]
