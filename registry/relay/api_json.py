"""How relay subscriptions, messages and attempts look in the API."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def subscription_json(row: Any, relay_url: str, secrets: dict[str, bool]) -> dict[str, Any]:
    return {
        "id": row.id,
        "agentId": row.agent_id,
        "taskId": row.task_id,
        "targetUrl": row.target_url,
        "relayUrl": relay_url,
        "authMode": row.auth_mode,
        "status": row.status,
        "statusReason": row.status_reason,
        "hasTargetToken": secrets["targetToken"],
        "hasTargetAuthorization": secrets["targetAuthorization"],
        "previousTokenValidUntil": _time(row.previous_token_until),
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
    }


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
        # Pending behind an earlier message of its task (in-order delivery); `notBefore` is the
        # back-off it still owes once it is the task's head.
        "waitingForEarlier": row.state == "pending" and row.due_at is None,
        "notBefore": _time(row.not_before),
        "lastAttemptAt": _time(row.last_attempt_at),
        "lastStatus": row.last_status,
        "lastError": row.last_error,
        "finishedAt": _time(row.finished_at),
        "replays": row.replays,
        "bytes": len(row.body),
    }


def attempt_json(row: Any) -> dict[str, Any]:
    return {
        "attempt": row.attempt,
        "startedAt": _time(row.started_at),
        "outcome": row.outcome,
        "httpStatus": row.http_status,
        "latencyMs": row.latency_ms,
        "error": row.error,
        "response": row.response,
        "nextAttemptAt": _time(row.next_attempt_at),
    }


def message_detail_json(detail: Any) -> dict[str, Any]:
    try:
        body: Any = json.loads(detail.message.body)
    except ValueError:  # accepted bodies are JSON; this only guards against a hand-edited row
        body = None
    return {**message_json(detail.message), "subscriptionId": detail.subscription_id, "body": body,
            "attemptLog": [attempt_json(a) for a in detail.attempts]}
