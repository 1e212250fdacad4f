"""`/v1/agents/{id}/health` (recent checks) and `/v1/agents/{id}/check` (probe now).

The id in the path arrives whole: the catalog resolves a prefix of it for every route
(`registry.catalog.api.resolve_agent_id`)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.auth import requires
from registry.catalog import api_time, health_json
from registry.request_input import query_int, refuse_unknown

bp = Blueprint("health", __name__, url_prefix="/v1/agents")

MAX_CHECKS = 500


def _health() -> Any:
    return current_app.extensions["agentdex"].health


def crawl_json(agent: Any) -> dict[str, Any] | None:
    """When the card was last re-fetched and is due next; None for pushed cards (never crawled)."""
    if agent.source != "crawled":
        return None
    return {
        "crawledAt": api_time(agent.crawled_at),
        "nextCrawlAt": api_time(agent.next_crawl_at) if agent.crawled_at else None,
        "failures": agent.crawl_failures,
        "error": agent.crawl_error,
    }


def health_check_json(check: Any) -> dict[str, Any]:
    """One probe of one interface."""
    return {
        "checkedAt": api_time(check.checked_at),
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


def _checks_response(agent_id: str, limit: int) -> Response:
    agent, checks = _health().recent_checks(agent_id, limit)
    return jsonify(
        {
            "agentId": agent.id,
            "health": {**health_json(agent), "since": api_time(agent.health_since)},
            "crawl": crawl_json(agent),
            "items": [health_check_json(check) for check in checks],
        }
    )


@bp.get("/<agent_id>/health")
def recent(agent_id: str) -> Response:
    refuse_unknown(request.args.keys(), {"limit"}, "query parameters")
    return _checks_response(agent_id, query_int("limit", 50, 1, MAX_CHECKS))


@bp.post("/<agent_id>/check")
@requires("agents:write")
def check_now(agent_id: str) -> Response:
    # Any writer may ask: health is a public fact about an agent, and a probe creates no work on
    # it (a GetTask for a task that cannot exist). The probe lease keeps it to one at a time.
    refuse_unknown(request.args.keys(), set(), "query parameters")
    probe_round = _health().check_now(agent_id)
    return _checks_response(agent_id, len(probe_round.results))
