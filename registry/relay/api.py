"""The push relay over HTTP for clients: `/v1/relay/…` (the `relay` scope). Agents push to `/relay/{id}`
(`registry.relay.api_ingress`)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask.typing import ResponseReturnValue

from registry.auth import requires
from registry.relay.api_ingress import relay_url
from registry.relay.models import MESSAGE_STATES
from registry.relay.subscriptions import SubscriptionRequest
from registry.request_input import (
    current_actor,
    json_object,
    query_choice,
    query_int,
    refuse_unknown,
    string_field,
    time_field,
)

bp = Blueprint("relay", __name__, url_prefix="/v1/relay")

CREATE_FIELDS = {"agentId", "taskId", "targetUrl", "targetToken", "targetAuthorization", "authMode"}


def _relay() -> Any:
    return current_app.extensions["agentdex"].relay


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def subscription_json(row: Any, token: str | None = None) -> dict[str, Any]:
    """`token`: the relay token, shown once (at creation or rotation): only its SHA-256 is stored."""
    # Behind a proxy, AGENTDEX_PUBLIC_URL makes the relay URL the public one.
    base = current_app.extensions["agentdex"].settings.public_url or request.host_url
    secrets = _relay().subscriptions.has_secrets(row)
    return {
        "id": row.id,
        "agentId": row.agent_id,
        "taskId": row.task_id,
        "targetUrl": row.target_url,
        "relayUrl": relay_url(base, row.id),
        "authMode": row.auth_mode,
        "status": row.status,
        "statusReason": row.status_reason,
        "hasTargetToken": secrets["targetToken"],
        "hasTargetAuthorization": secrets["targetAuthorization"],
        "previousTokenValidUntil": _time(row.previous_token_until),
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
    } | ({"relayToken": token} if token is not None else {})


def message_json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "taskId": row.task_key or None,
        "sequence": row.seq,
        "kind": row.kind,
        "state": row.state,
        "receivedAt": _time(row.received_at),
        "attempts": row.attempts,
        "nextAttemptAt": _time(row.due_at),
        # Pending behind an earlier message of its task; `notBefore` is the back-off it still owes.
        "waitingForEarlier": row.state == "pending" and row.due_at is None,
        "notBefore": _time(row.not_before),
        "lastAttemptAt": _time(row.last_attempt_at),
        "lastStatus": row.last_status,
        "lastError": row.last_error,
        "finishedAt": _time(row.finished_at),
        "replays": row.replays,
        "bytes": len(row.body),
    }


def message_detail_json(detail: Any) -> dict[str, Any]:
    try:
        body: Any = json.loads(detail.message.body)
    except ValueError:  # accepted bodies are JSON; this only guards against a hand-edited row
        body = None
    attempts = [
        {
            "attempt": a.attempt,
            "startedAt": _time(a.started_at),
            "outcome": a.outcome,
            "httpStatus": a.http_status,
            "latencyMs": a.latency_ms,
            "error": a.error,
            "response": a.response,
            "nextAttemptAt": _time(a.next_attempt_at),
        }
        for a in detail.attempts
    ]
    return {
        **message_json(detail.message),
        "subscriptionId": detail.subscription_id,
        "body": body,
        "attemptLog": attempts,
    }


@bp.post("/subscriptions")
@requires("relay")
def create_subscription() -> ResponseReturnValue:
    body = json_object()
    refuse_unknown(body, CREATE_FIELDS, "fields")
    wanted = SubscriptionRequest(
        agent_id=string_field(body, "agentId", required=True) or "",
        target_url=string_field(body, "targetUrl", required=True) or "",
        task_id=string_field(body, "taskId"),
        target_token=string_field(body, "targetToken"),
        target_authorization=string_field(body, "targetAuthorization"),
        auth_mode=string_field(body, "authMode") or "token",
    )
    issued = _relay().subscriptions.create(current_actor(), wanted)
    location = url_for("relay.get_subscription", sub_id=issued.subscription.id)
    return jsonify(subscription_json(issued.subscription, issued.relay_token)), 201, {"Location": location}


@bp.get("/subscriptions")
@requires("relay")
def list_subscriptions() -> Response:
    refuse_unknown(request.args.keys(), {"limit", "cursor"}, "query parameters")
    limit, cursor = query_int("limit", 50, 1, 200), request.args.get("cursor")
    page = _relay().subscriptions.list(current_actor(), limit=limit, cursor=cursor)
    return jsonify({"items": [subscription_json(row) for row in page.items], "nextCursor": page.next_cursor})


@bp.get("/subscriptions/<sub_id>")
@requires("relay")
def get_subscription(sub_id: str) -> Response:
    return jsonify(subscription_json(_relay().subscriptions.get(current_actor(), sub_id)))


@bp.patch("/subscriptions/<sub_id>")
@requires("relay")
def change_subscription(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"status"}, "fields")
    status = string_field(body, "status", required=True) or ""
    return jsonify(subscription_json(_relay().subscriptions.set_status(current_actor(), sub_id, status)))


@bp.delete("/subscriptions/<sub_id>")
@requires("relay")
def delete_subscription(sub_id: str) -> Response:
    _relay().subscriptions.delete(current_actor(), sub_id)
    return Response(status=204)


@bp.post("/subscriptions/<sub_id>/rotate")
@requires("relay")
def rotate_token(sub_id: str) -> Response:
    issued = _relay().subscriptions.rotate(current_actor(), sub_id)
    return jsonify(subscription_json(issued.subscription, issued.relay_token))


@bp.get("/subscriptions/<sub_id>/messages")
@requires("relay")
def list_messages(sub_id: str) -> Response:
    refuse_unknown(request.args.keys(), {"state", "limit", "cursor"}, "query parameters")
    state, limit = query_choice("state", MESSAGE_STATES), query_int("limit", 50, 1, 500)
    page = _relay().operations.messages(
        current_actor(), sub_id, state=state, limit=limit, cursor=request.args.get("cursor")
    )
    return jsonify({"items": [message_json(row) for row in page.items], "nextCursor": page.next_cursor})


@bp.post("/subscriptions/<sub_id>/replay")
@requires("relay")
def replay_dead(sub_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"since"}, "fields")
    since = time_field(body, "since")
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
