"""Change-event subscriptions over HTTP: `/v1/events/…`, for anyone with a token."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask.typing import ResponseReturnValue

from registry.auth import requires
from registry.errors import InvalidRequest, NotFound
from registry.events.subscriptions import EventSubscriptionRequest, Subscribed
from registry.relay import MESSAGE_STATES, message_detail_json, message_json
from registry.request_input import (
    current_actor,
    json_object,
    query_choice,
    query_int,
    refuse_unknown,
    string_field,
    time_field,
)
from registry.trust import JWKS_PATH

bp = Blueprint("events", __name__, url_prefix="/v1/events")

CREATE_FIELDS = {"targetUrl", "types", "filter", "targetToken", "targetAuthorization"}
FILTER_FIELDS = {"tags", "owner"}
# Following the catalog needs no scope: any valid token.
any_token = requires(None)


def _services() -> Any:
    return current_app.extensions["agentdex"]


def _base_url() -> str:
    # Behind a proxy, AGENTDEX_PUBLIC_URL makes it the public one (the events' `source` too).
    return (_services().settings.public_url or request.host_url).rstrip("/")


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def signing_json() -> dict[str, Any]:
    """How to verify a delivery: Standard Webhooks `v1a`, the registry's Ed25519 key (as relayed messages)."""
    key = _services().registry_keys.active("EdDSA")
    raw = key.public.public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {
        "scheme": "v1a",
        "kid": key.public.kid,
        "publicKey": "whpk_" + base64.b64encode(raw).decode("ascii"),
        "jwksUrl": _base_url() + JWKS_PATH,
    }


def subscription_json(sub: Subscribed, *, signing: bool = False) -> dict[str, Any]:
    row = sub.target
    secrets = _services().relay.subscriptions.has_secrets(row)
    shown = {
        "id": row.id,
        "targetUrl": row.target_url,
        "types": sub.types,
        "filter": {"tags": sub.tags, "owner": sub.owner},
        "status": row.status,
        "statusReason": row.status_reason,
        "hasTargetToken": secrets["targetToken"],
        "hasTargetAuthorization": secrets["targetAuthorization"],
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
    }
    return shown | ({"signing": signing_json()} if signing else {})


def _subscription_request(body: dict[str, Any]) -> EventSubscriptionRequest:
    refuse_unknown(body, CREATE_FIELDS, "fields")
    given = body.get("filter") or {}
    if not isinstance(given, dict):
        raise InvalidRequest('filter must be an object such as {"tags": ["weather"], "owner": "alice"}')
    refuse_unknown(given, FILTER_FIELDS, "filter fields")
    tags = given.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise InvalidRequest("filter.tags must be a list of strings", {"field": "filter.tags"})
    return EventSubscriptionRequest(
        target_url=string_field(body, "targetUrl", required=True) or "",
        types=body.get("types"),  # type: ignore[arg-type]  # checked by the service
        tags=tags,
        owner=string_field(given, "owner"),
        target_token=string_field(body, "targetToken"),
        target_authorization=string_field(body, "targetAuthorization"),
    )


@bp.post("/subscriptions")
@any_token
def create_subscription() -> ResponseReturnValue:
    wanted = _subscription_request(json_object())
    sub = _services().events.subscriptions.create(current_actor(), wanted, source=_base_url())
    location = url_for("events.get_subscription", sub_id=sub.target.id)
    return jsonify(subscription_json(sub, signing=True)), 201, {"Location": location}


@bp.get("/subscriptions")
@any_token
def list_subscriptions() -> Response:
    refuse_unknown(request.args.keys(), {"limit", "cursor"}, "query parameters")
    limit, cursor = query_int("limit", 50, 1, 200), request.args.get("cursor")
    page = _services().events.subscriptions.list(current_actor(), limit=limit, cursor=cursor)
    return jsonify({"items": [subscription_json(sub) for sub in page.items], "nextCursor": page.next_cursor})


@bp.get("/subscriptions/<sub_id>")
@any_token
def get_subscription(sub_id: str) -> Response:
    return jsonify(subscription_json(_services().events.subscriptions.get(current_actor(), sub_id), signing=True))


@bp.patch("/subscriptions/<sub_id>")
@any_token
def change_subscription(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"status"}, "fields")
    status = string_field(body, "status", required=True) or ""
    return jsonify(subscription_json(_services().events.subscriptions.set_status(current_actor(), sub_id, status)))


@bp.delete("/subscriptions/<sub_id>")
@any_token
def delete_subscription(sub_id: str) -> Response:
    _services().events.subscriptions.delete(current_actor(), sub_id)
    return Response(status=204)


@bp.get("/subscriptions/<sub_id>/messages")
@any_token
def list_messages(sub_id: str) -> Response:
    refuse_unknown(request.args.keys(), {"state", "limit", "cursor"}, "query parameters")
    state, limit = query_choice("state", MESSAGE_STATES), query_int("limit", 50, 1, 500)
    sub = _services().events.subscriptions.get(current_actor(), sub_id)  # 404 unless an event subscription
    page = _services().relay.operations.messages(
        current_actor(), sub.target.id, state=state, limit=limit, cursor=request.args.get("cursor")
    )
    return jsonify({"items": [_as_event(message_json(row)) for row in page.items], "nextCursor": page.next_cursor})


@bp.post("/subscriptions/<sub_id>/replay")
@any_token
def replay_dead(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"since"}, "fields")
    since = time_field(body, "since")
    sub = _services().events.subscriptions.get(current_actor(), sub_id)
    replayed = _services().relay.operations.replay_dead(current_actor(), sub.target.id, since)
    return jsonify({"subscriptionId": sub_id, "replayed": replayed})


@bp.post("/subscriptions/<sub_id>/messages/<message_id>/replay")
@any_token
def replay_message(sub_id: str, message_id: str) -> Response:
    sub = _services().events.subscriptions.get(current_actor(), sub_id)
    operations = _services().relay.operations
    if operations.message(current_actor(), message_id).subscription_id != sub.target.id:
        raise NotFound(f"subscription {sub_id} has no message {message_id!r}")
    return jsonify(_as_event(message_detail_json(operations.replay(current_actor(), message_id))))


def _as_event(shown: dict[str, Any]) -> dict[str, Any]:
    """A relayed message as an event delivery: the relay's task is the agent."""
    return {"agentId": shown.pop("taskId"), **shown}
