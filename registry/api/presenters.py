"""How agents look in the API. One shape for the list and for a single agent: the fields that
change without a new card, then the profile rendered from the card when it was stored."""

from __future__ import annotations

import datetime as dt
from typing import Any

from registry import jsontext


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def live_fields(agent: Any) -> dict[str, Any]:
    """The fields that change without a new card (status, times, …)."""
    return {
        "id": agent.id,
        "cardUrl": agent.card_url,
        "status": agent.status,
        "statusMessage": agent.status_message,
        "source": agent.source,
        "cardVersion": agent.card_version,
        "createdAt": _time(agent.created_at),
        "updatedAt": _time(agent.updated_at),
        "health": health_json(agent),
        "signature": signature_json(agent),
        "jwksUrl": agent.jwks_url,
    }


def signature_json(agent: Any) -> dict[str, Any]:
    """The current card's signature state (issue 4): verified, invalid, unverifiable or unsigned,
    the kids of the signatures that verified, and when."""
    return {
        "state": agent.signature_state,
        "kids": list(agent.signature_kids or []),
        "checkedAt": _time(agent.signature_checked_at),
    }


def health_json(agent: Any) -> dict[str, Any]:
    """The agent's rolled-up health (issue 5): state, when checked, latency, reason, uptime."""
    return {
        "state": agent.health_state,
        "checkedAt": _time(agent.health_checked_at),
        "latencyMs": agent.health_latency_ms,
        "reason": agent.health_reason,
        "uptime24h": agent.health_uptime24h,
    }


def health_check_json(check: Any) -> dict[str, Any]:
    """One probe of one interface."""
    return {
        "checkedAt": _time(check.checked_at),
        "interfaceUrl": check.interface_url,
        "protocolVersion": check.protocol_version,
        "method": check.method,
        "outcome": check.outcome,
        "reason": check.reason,
        "latencyMs": check.latency_ms,
        "httpStatus": check.http_status,
        "rpcCode": check.rpc_code,
        "detail": check.detail,
    }


def agent_json(agent: Any) -> dict[str, Any]:
    return {**live_fields(agent), **jsontext.loads(agent.profile)}


def agent_json_text(agent: Any) -> str:
    """The same object as `agent_json`, as JSON text, without decoding the stored profile."""
    live = jsontext.dumps_text(live_fields(agent))
    return live[:-1] + "," + agent.profile[1:]


def page_json_text(agents: list[Any], next_cursor: str | None) -> str:
    items = ",".join(agent_json_text(agent) for agent in agents)
    return f'{{"items":[{items}],"nextCursor":{jsontext.dumps_text(next_cursor)}}}'
