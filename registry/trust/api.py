"""`/v1/keys` (JWKS owners register so their cards verify) and `/v1/agents/{id}/signatures`.

The id in the path arrives whole: the catalog resolves a prefix of it for every route
(`registry.catalog.api.resolve_agent_id`)."""

from __future__ import annotations

import hashlib
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.auth import requires
from registry.request_input import current_actor, json_object, query_int, refuse_unknown, string_field
from registry.trust.models import TrustedKey, iso

bp = Blueprint("trust", __name__)


def _services() -> Any:
    return current_app.extensions["agentdex"]


def _key_json(key: TrustedKey, agent_id: str | None) -> dict[str, Any]:
    return {"id": key.id, "agentId": agent_id, "kids": list(key.kids), "createdAt": iso(key.created_at)}


def endorsed_card_response(body: bytes) -> Response:
    """A card with the registry's signature appended (`GET /v1/agents/{id}/card?endorsed=true`)."""
    response = Response(body, mimetype="application/json")
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.make_conditional(request)
    return response


@bp.post("/v1/keys")
@requires("agents:write")
def register_keys() -> tuple[Response, int]:
    """Register a public JWKS for all of the caller's agents, or for one (`agentId`)."""
    body = json_object()
    refuse_unknown(body, {"jwks", "agentId"}, "fields")
    agent_id = string_field(body, "agentId") or None
    key = _services().trust.register_keys(current_actor(), body.get("jwks"), agent_id)
    return jsonify(_key_json(key, agent_id)), 201


@bp.get("/v1/keys")
@requires("agents:write")
def list_keys() -> Response:
    return jsonify(
        {"items": [_key_json(key, agent_id) for key, agent_id in _services().trust.owner_keys.list(current_actor())]}
    )


@bp.delete("/v1/keys/<key_id>")
@requires("agents:write")
def remove_keys(key_id: str) -> Response:
    _services().trust.remove_keys(current_actor(), key_id)
    return Response(status=204)


@bp.get("/v1/agents/<agent_id>/signatures")
def signatures(agent_id: str) -> Response:
    """What verification found for the current card (or `version`), signature by signature."""
    refuse_unknown(request.args.keys(), {"version"}, "query parameters")
    version = query_int("version", 0, 1, 1_000_000_000) or None
    return jsonify(_services().trust_reads.report(agent_id, version))
