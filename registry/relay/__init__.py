"""The push relay (issue 6): agents push task updates to Agentdex, Agentdex forwards them.

A client subscribes (`subscriptions.SubscriptionService`) and gets a relay URL and a secret to
hand to the agent as its push notification config (A2A v0.3 §6.8, v1.0 §3.1.7). The agent POSTs
to `/relay/{id}`; `ingress.RelayIngress` authenticates it (the secret in constant time, or also a
JWT signed by a key bound to the agent's card), checks the body's task against the subscription
and commits the message to the outbox before answering 202. The `relay-delivery` job
(`job.RelayDeliveryJob` over `outbox.RelayOutbox`) POSTs each message unchanged to the client's
webhook with the client's credentials and Standard Webhooks headers signed by the registry,
in order per task, retrying with back-off, dead-lettering after the last attempt.
`operations.RelayOperations` lists messages and replays them.
"""

from registry.relay.agent_jwt import card_key_sources
from registry.relay.api_ingress import RelayIngressEndpoint
from registry.relay.errors import InvalidNotification, PushNotSupported, RelayError, ReplayedNotification, TaskMismatch
from registry.relay.job import RELAY_DELIVERY
from registry.relay.models import RelayAttempt, RelayMessage, RelaySubscription
from registry.relay.openapi import SCHEMAS as OPENAPI_SCHEMAS
from registry.relay.openapi import paths as openapi_paths
from registry.relay.wiring import RelayServices, build_relay, relay_policy

__all__ = [
    "OPENAPI_SCHEMAS", "RELAY_DELIVERY", "InvalidNotification", "PushNotSupported", "RelayAttempt", "RelayError", "RelayIngressEndpoint",
    "RelayMessage", "RelayServices", "RelaySubscription", "ReplayedNotification", "TaskMismatch", "build_relay",
    "card_key_sources", "openapi_paths", "relay_policy",
]
