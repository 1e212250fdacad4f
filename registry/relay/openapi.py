"""The push relay's part of the OpenAPI document (merged by `registry.api.openapi`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SUB_ID = {"name": "sub_id", "in": "path", "required": True, "schema": {"type": "string"}}
MESSAGE_ID = {"name": "message_id", "in": "path", "required": True, "schema": {"type": "string"}}
NOTIFICATION_HEADERS = [
    {"name": name, "in": "header", "schema": {"type": "string"}, "description": "the relay token (one of these three)"}
    for name in ("X-A2A-Notification-Token", "A2A-Notification-Token", "Authorization")
]

SCHEMAS: dict[str, Any] = {
    "RelaySubscriptionRequest": {
        "type": "object",
        "required": ["agentId", "targetUrl"],
        "properties": {
            "agentId": {"type": "string"},
            "taskId": {"type": "string", "description": "relay only this task's notifications"},
            "targetUrl": {"type": "string", "format": "uri", "description": "the client's webhook"},
            "targetToken": {"type": "string", "description": "sent to the webhook as X-A2A-Notification-Token"},
            "targetAuthorization": {"type": "string", "description": "sent to the webhook as Authorization"},
            "authMode": {"enum": ["token", "jwt"], "description": "jwt: also a JWT signed by a key bound to the card"},
        },
    },
    "RelayStatus": {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"enum": ["active", "disabled"]}},
    },
    "RelayReplay": {
        "type": "object",
        "required": ["since"],
        "properties": {"since": {"type": "string", "format": "date-time"}},
    },
    "PushNotification": {
        "type": "object",
        "description": "A2A v1.0 StreamResponse (task, statusUpdate, artifactUpdate or message) or an A2A v0.3 Task",
    },
}


def paths(op: Callable[..., dict[str, Any]], q: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """`op` and `q` are the document's operation and query-parameter builders."""
    page = [q("limit", {"type": "integer", "minimum": 1}, "page size"), q("cursor", {"type": "string"}, "nextCursor")]
    state = q("state", {"enum": ["pending", "delivered", "dead"]}, "only messages in this state")

    def client(summary: str, params: list[dict[str, Any]], *errors: str, **options: Any) -> dict[str, Any]:
        """An operation for a client with the `relay` scope (401 and 403 besides `errors`)."""
        return op(summary, params=params, auth=True, errors=tuple(sorted({"401", "403", *errors})), **options)

    ingress = op(
        "An agent's push notification: authenticated, checked, committed, then 202 with the message id",
        params=NOTIFICATION_HEADERS + [SUB_ID],
        body="PushNotification",
        ok="202",
        errors=("400", "401", "404", "409", "413", "415", "422", "429"),
    )
    subscribe = "Subscribe: returns relayUrl and relayToken (shown once) to give the agent"
    return {
        "/v1/relay/subscriptions": {
            "get": client("Your relay subscriptions, newest first", page),
            "post": client(subscribe, [], "400", "404", "422", body="RelaySubscriptionRequest", ok="201"),
        },
        "/v1/relay/subscriptions/{sub_id}": {
            "get": client("One subscription", [SUB_ID], "404"),
            "patch": client(
                "Enable or disable delivery (e.g. after the target answered 410)",
                [SUB_ID],
                "400",
                "404",
                "422",
                body="RelayStatus",
            ),
            "delete": client("Stop relaying; undelivered messages are dead-lettered", [SUB_ID], "404", ok="204"),
        },
        "/v1/relay/subscriptions/{sub_id}/rotate": {
            "post": client("A new relay token; the old one stays valid for the grace period", [SUB_ID], "404")
        },
        "/v1/relay/subscriptions/{sub_id}/messages": {
            "get": client(
                "Relayed messages, newest first: state, attempts, last status, next attempt",
                [SUB_ID, state, *page],
                "404",
                "422",
            )
        },
        "/v1/relay/subscriptions/{sub_id}/replay": {
            "post": client(
                "Queue again every message dead-lettered at or after `since`",
                [SUB_ID],
                "400",
                "404",
                "409",
                "422",
                body="RelayReplay",
            )
        },
        "/v1/relay/messages/{message_id}": {
            "get": client("One message with its body and attempt log", [MESSAGE_ID], "404")
        },
        "/v1/relay/messages/{message_id}/replay": {
            "post": client(
                "Deliver a delivered or dead-lettered message again (same webhook-id)", [MESSAGE_ID], "404", "409"
            )
        },
        "/relay/{sub_id}": {"post": ingress},
    }
