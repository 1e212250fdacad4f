"""The change events' part of the OpenAPI document (merged by `registry.api.openapi`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from registry.change_events import EVENT_TYPES
from registry.relay import MESSAGE_STATES

SUB_ID = {"name": "sub_id", "in": "path", "required": True, "schema": {"type": "string"}}
MESSAGE_ID = {"name": "message_id", "in": "path", "required": True, "schema": {"type": "string"}}

SCHEMAS: dict[str, Any] = {
    "EventSubscriptionRequest": {
        "type": "object",
        "required": ["targetUrl", "types"],
        "properties": {
            "targetUrl": {
                "type": "string",
                "format": "uri",
                "description": "your webhook (the outbound policy applies)",
            },
            "types": {
                "type": "array",
                "minItems": 1,
                "items": {"enum": list(EVENT_TYPES)},
                "description": "event types; the part after io.agentdex.agent. alone is accepted too",
            },
            "filter": {
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "agents with any of them"},
                    "owner": {"type": "string", "description": "agents of this principal"},
                },
            },
            "targetToken": {"type": "string", "description": "sent to the webhook as X-A2A-Notification-Token"},
            "targetAuthorization": {"type": "string", "description": "sent to the webhook as Authorization"},
        },
    },
    "AgentChangeEvent": {
        "type": "object",
        "description": "What the webhook receives: a CloudEvents 1.0 event, structured JSON mode "
        "(application/cloudevents+json), signed with Standard Webhooks v1a headers",
        "required": ["specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"],
        "properties": {
            "specversion": {"const": "1.0"},
            "id": {"type": "string", "description": "stable: a redelivery has the same id"},
            "source": {"type": "string", "format": "uri", "description": "the registry's public URL"},
            "type": {"enum": list(EVENT_TYPES)},
            "subject": {"type": "string", "description": "the agent's id"},
            "time": {"type": "string", "format": "date-time"},
            "datacontenttype": {"const": "application/json"},
            "data": {
                "type": "object",
                "required": ["id", "name", "cardUrl", "status", "health", "signature"],
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "cardUrl": {"type": "string"},
                    "owner": {"type": ["string", "null"]},
                    "status": {"enum": ["active", "deprecated"]},
                    "cardVersion": {"type": "integer"},
                    "version": {"type": ["string", "null"], "description": "the card's own version"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "health": {"$ref": "#/components/schemas/StateChange"},
                    "signature": {"$ref": "#/components/schemas/StateChange"},
                    "change": {"enum": ["card", "status", "statusMessage", "owner"], "description": "of an update"},
                },
            },
        },
    },
    "StateChange": {
        "type": "object",
        "properties": {
            "state": {"type": "string"},
            "previous": {"type": ["string", "null"], "description": "the state before, when this event changed it"},
        },
    },
}


def paths(op: Callable[..., dict[str, Any]], q: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """`op` and `q` are the document's operation and query-parameter builders."""
    page = [q("limit", {"type": "integer", "minimum": 1}, "page size"), q("cursor", {"type": "string"}, "nextCursor")]
    state = q("state", {"enum": list(MESSAGE_STATES)}, "only deliveries in this state")

    def follower(summary: str, params: list[dict[str, Any]], *errors: str, **options: Any) -> dict[str, Any]:
        """An operation for any token (401 besides `errors`)."""
        return op(summary, params=params, auth=True, errors=tuple(sorted({"401", *errors})), **options)

    subscribe = "Subscribe a webhook to change events; returns how to verify the deliveries (signing)"
    return {
        "/v1/events/subscriptions": {
            "get": follower("Your event subscriptions, newest first", page),
            "post": follower(subscribe, [], "400", "422", body="EventSubscriptionRequest", ok="201"),
        },
        "/v1/events/subscriptions/{sub_id}": {
            "get": follower("One subscription, with how to verify its deliveries", [SUB_ID], "404"),
            "patch": follower(
                "Enable or disable delivery (e.g. after the target answered 410)",
                [SUB_ID],
                "400",
                "404",
                "422",
                body="RelayStatus",
            ),
            "delete": follower("Unsubscribe; undelivered events are dead-lettered", [SUB_ID], "404", ok="204"),
        },
        "/v1/events/subscriptions/{sub_id}/messages": {
            "get": follower(
                "Deliveries, newest first: state, attempts, last status, next attempt",
                [SUB_ID, state, *page],
                "404",
                "422",
            )
        },
        "/v1/events/subscriptions/{sub_id}/replay": {
            "post": follower(
                "Queue again every delivery dead-lettered at or after `since`",
                [SUB_ID],
                "400",
                "404",
                "409",
                "422",
                body="RelayReplay",
            )
        },
        "/v1/events/subscriptions/{sub_id}/messages/{message_id}/replay": {
            "post": follower(
                "Deliver an event again (same webhook-id and event id)", [SUB_ID, MESSAGE_ID], "404", "409"
            )
        },
    }
