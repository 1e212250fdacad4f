"""`/v1/agents/{id}/approve`, `/reject` and `/claim`: what the domain's proven owner (or, for a
review, an admin) does to an entry someone else made. The id may be a unique prefix, as everywhere
(`registry.catalog.api.resolve_agent_id`, registered for the whole app)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from registry.auth import requires
from registry.catalog import Agent
from registry.request_input import current_actor, json_object, refuse_unknown, string_field

bp = Blueprint("agent_ownership", __name__, url_prefix="/v1/agents")


def _services() -> Any:
    return current_app.extensions["agentdex"]


@bp.post("/<agent_id>/approve")
@requires("agents:write")
def approve(agent_id: str) -> Response:
    return _status_json(_services().agent_policy.review.approve(current_actor(), agent_id))


@bp.post("/<agent_id>/reject")
@requires("agents:write")
def reject(agent_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"reason"}, "fields")
    reason = string_field(body, "reason", required=True) or ""
    return _status_json(_services().agent_policy.review.reject(current_actor(), agent_id, reason))


@bp.post("/<agent_id>/claim")
@requires("agents:write")
def claim(agent_id: str) -> Response:
    actor = current_actor()
    claimed = _services().agent_policy.claims.claim(actor, agent_id)
    return jsonify({"id": agent_id, "owner": actor.principal_name, "claimed": claimed})


def _status_json(agent: Agent) -> Response:
    return jsonify({"id": agent.id, "status": agent.status, "statusMessage": agent.status_message})
