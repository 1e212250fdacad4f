"""`/v1/agents/{id}/approve`, `/reject` and `/claim`: what the domain's proven owner (or, for a
review, an admin) does to an entry someone else made. The id may be a unique prefix, as everywhere
(`registry.catalog.api.resolve_agent_id`, registered for the whole app)."""

from __future__ import annotations

from collections.abc import Callable
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


def agents_openapi_paths(op: Callable[..., dict[str, Any]], agent_id: dict[str, Any]) -> dict[str, Any]:
    """This module's part of the OpenAPI document (merged by `registry.api.openapi`)."""
    reviewed = "an admin, or the proven owner of the agent's domain (else 403 not_domain_owner)"
    return {
        "/v1/agents/{agent_id}/approve": {
            "post": op(
                f"List an entry in review (pending or rejected): {reviewed}. Answers {{id, status, statusMessage}}; "
                "409 for an entry not in review",
                params=[agent_id],
                auth=True,
                errors=("401", "403", "404", "409"),
            )
        },
        "/v1/agents/{agent_id}/reject": {
            "post": op(
                f'Reject a pending entry with {{"reason"}}, which it keeps as its status message: {reviewed}. '
                "It stays unlisted; 409 for an entry not pending",
                params=[agent_id],
                body="RejectRequest",
                auth=True,
                errors=("401", "403", "404", "409", "422"),
            )
        },
        "/v1/agents/{agent_id}/claim": {
            "post": op(
                "Take the entry of an agent on a domain the caller has proven (admins too: else 403 "
                "not_domain_owner); nothing else about it changes, the audit log names both owners. "
                "Answers {id, owner, claimed} (false: it was the caller's already)",
                params=[agent_id],
                auth=True,
                errors=("401", "403", "404"),
            )
        },
    }


SCHEMAS: dict[str, Any] = {
    "RejectRequest": {
        "type": "object",
        "required": ["reason"],
        "properties": {"reason": {"type": "string", "maxLength": 1000, "description": "why; the entry keeps it"}},
    }
}
