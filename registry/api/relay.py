"""The push relay over HTTP: `/v1/relay/…` for clients (the `relay` scope), `/relay/{id}` for agents."""

from __future__ import annotations

import datetime as dt
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for

from registry.api.auth import requires
from registry.api.relay_json import message_detail_json, message_json, subscription_json
from registry.api.requests import current_actor, json_object, query_choice, query_int, refuse_unknown, string_field
from registry.errors import InvalidRequest, PayloadTooLarge, UnsupportedMediaType
from registry.models.relay import MESSAGE_STATES
from registry.relay.ingress import Notification
from registry.relay.subscriptions import SubscriptionRequest

bp = Blueprint("relay", __name__, url_prefix="/v1/relay")
ingress_bp = Blueprint("relay_ingress", __name__, url_prefix="/relay")

CREATE_FIELDS = {"agentId", "taskId", "targetUrl", "targetToken", "targetAuthorization", "authMode"}
TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")


def _relay() -> Any:
    return current_app.extensions["agentdex"].relay


def relay_url(sub_id: str) -> str:
    """What the client hands the agent. Behind a proxy, set AGENTDEX_PUBLIC_URL so it is the public one."""
    base = current_app.extensions["agentdex"].settings.public_url or request.host_url.rstrip("/")
    return f"{base}/relay/{sub_id}"


def _subscription_response(row: Any, status: int = 200, token: str | None = None) -> Response:
    payload = subscription_json(row, relay_url(row.id), _relay().subscriptions.has_secrets(row))
    if token is not None:
        payload["relayToken"] = token  # shown once: only its SHA-256 is stored
    response = jsonify(payload)
    response.status_code = status
    return response


# -- subscriptions ------------------------------------------------------------------------

@bp.post("/subscriptions")
@requires("relay")
def create_subscription() -> Response:
    body = json_object()
    refuse_unknown(body, CREATE_FIELDS, "fields")
    issued = _relay().subscriptions.create(current_actor(), SubscriptionRequest(
        agent_id=string_field(body, "agentId", required=True) or "",
        target_url=string_field(body, "targetUrl", required=True) or "",
        task_id=string_field(body, "taskId"),
        target_token=string_field(body, "targetToken"),
        target_authorization=string_field(body, "targetAuthorization"),
        auth_mode=string_field(body, "authMode") or "token",
    ))
    response = _subscription_response(issued.subscription, 201, issued.relay_token)
    response.headers["Location"] = url_for("relay.get_subscription", sub_id=issued.subscription.id)
    return response


@bp.get("/subscriptions")
@requires("relay")
def list_subscriptions() -> Response:
    refuse_unknown(request.args.keys(), {"limit", "cursor"}, "query parameters")
    page = _relay().subscriptions.list(current_actor(), limit=query_int("limit", 50, 1, 200),
                                       cursor=request.args.get("cursor"))
    items = [subscription_json(row, relay_url(row.id), _relay().subscriptions.has_secrets(row)) for row in page.items]
    return jsonify({"items": items, "nextCursor": page.next_cursor})


@bp.get("/subscriptions/<sub_id>")
@requires("relay")
def get_subscription(sub_id: str) -> Response:
    return _subscription_response(_relay().subscriptions.get(current_actor(), sub_id))


@bp.patch("/subscriptions/<sub_id>")
@requires("relay")
def change_subscription(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"status"}, "fields")
    status = string_field(body, "status", required=True) or ""
    return _subscription_response(_relay().subscriptions.set_status(current_actor(), sub_id, status))


@bp.delete("/subscriptions/<sub_id>")
@requires("relay")
def delete_subscription(sub_id: str) -> Response:
    _relay().subscriptions.delete(current_actor(), sub_id)
    return Response(status=204)


@bp.post("/subscriptions/<sub_id>/rotate")
@requires("relay")
def rotate_token(sub_id: str) -> Response:
    issued = _relay().subscriptions.rotate(current_actor(), sub_id)
    return _subscription_response(issued.subscription, token=issued.relay_token)


# -- messages -----------------------------------------------------------------------------

@bp.get("/subscriptions/<sub_id>/messages")
@requires("relay")
def list_messages(sub_id: str) -> Response:
    refuse_unknown(request.args.keys(), {"state", "limit", "cursor"}, "query parameters")
    page = _relay().operations.messages(
        current_actor(), sub_id, state=query_choice("state", MESSAGE_STATES),
        limit=query_int("limit", 50, 1, 500), cursor=request.args.get("cursor"),
    )
    return jsonify({"items": [message_json(row) for row in page.items], "nextCursor": page.next_cursor})


@bp.post("/subscriptions/<sub_id>/replay")
@requires("relay")
def replay_dead(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"since"}, "fields")
    since = _iso_time(string_field(body, "since", required=True) or "")
    replayed = _relay().operations.replay_dead(current_actor(), sub_id, since)
    return jsonify({"subscriptionId": sub_id, "replayed": replayed})


@bp.get("/messages/<message_id>")
@requires("relay")
def get_message(message_id: str) -> Response:
    return jsonify(message_detail_json(_relay().operations.message(current_actor(), message_id)))


@bp.post("/messages/<message_id>/replay")
@requires("relay")
def replay_message(message_id: str) -> Response:
    return jsonify(message_detail_json(_relay().operations.replay(current_actor(), message_id)))


# -- ingress ------------------------------------------------------------------------------

@ingress_bp.post("/<sub_id>")
def ingest(sub_id: str) -> Response:
    body = _notification_body(_relay_settings().max_body_bytes)
    bearer = _bearer(request.headers.get("Authorization"))
    tokens = tuple(t for t in [*(request.headers.get(h) for h in TOKEN_HEADERS), bearer] if t)
    accepted = _relay().ingress.accept(Notification(
        sub_id, body, tokens, request.headers.get("Authorization"), lambda: relay_url(sub_id),
    ))
    response = jsonify({"id": accepted.message_id, "subscriptionId": accepted.subscription_id,
                        "taskId": accepted.task_id, "kind": accepted.kind, "status": "accepted"})
    response.status_code = 202
    return response


def _relay_settings() -> Any:
    return current_app.extensions["agentdex"].settings.relay


def _notification_body(limit: int) -> bytes:
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType(f"push notifications are JSON (Content-Type: application/json), not {mimetype or 'none'!r}")
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"the notification is {request.content_length} bytes; the limit is {limit}", {"limit": limit})
    request.max_content_length = limit  # also bounds a chunked body while it is read
    body = request.get_data(cache=False)
    if not body:
        raise InvalidRequest("the notification has no body")
    return body


def _bearer(authorization: str | None) -> str | None:
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def _iso_time(raw: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequest("since must be an ISO 8601 time such as 2026-01-31T12:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
