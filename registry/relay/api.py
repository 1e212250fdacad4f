"""The push relay over HTTP: `/v1/relay/…` for clients (the `relay` scope), `/relay/{id}` for agents."""

from __future__ import annotations

import datetime as dt
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for

from registry.auth import requires
from registry.errors import InvalidRequest
from registry.relay import api_ingress as relay_ingress
from registry.relay.api_json import message_detail_json, message_json, subscription_json
from registry.relay.models import MESSAGE_STATES
from registry.relay.subscriptions import SubscriptionRequest
from registry.request_input import current_actor, json_object, query_choice, query_int, refuse_unknown, string_field

bp = Blueprint("relay", __name__, url_prefix="/v1/relay")

CREATE_FIELDS = {"agentId", "taskId", "targetUrl", "targetToken", "targetAuthorization", "authMode"}


def _relay() -> Any:
    return current_app.extensions["agentdex"].relay


def relay_url(sub_id: str) -> str:
    """What the client hands the agent. Behind a proxy, set AGENTDEX_PUBLIC_URL so it is the public one."""
    return relay_ingress.relay_url(current_app.extensions["agentdex"].settings.public_url or request.host_url, sub_id)


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


def _iso_time(raw: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequest("since must be an ISO 8601 time such as 2026-01-31T12:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
