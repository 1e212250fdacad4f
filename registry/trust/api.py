"""`/v1/keys` (JWKS owners register so their cards verify) and `/v1/agents/{id}/signatures`."""

from __future__ import annotations

import hashlib
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.auth import requires
from registry.request_input import current_actor, json_object, query_int, refuse_unknown, string_field

bp = Blueprint("trust", __name__)


def _services() -> Any:
    return current_app.extensions["agentdex"]


def endorsed_card_response(body: bytes) -> Response:
    """A card with the registry's signature appended (`GET /v1/agents/{id}/card?endorsed=true`)."""
    response = Response(body, mimetype="application/json")
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.make_conditional(request)
    return response


@bp.post("/v1/keys")
@requires("agents:write")
def register_keys() -> Response:
    """Register a public JWKS for all of the caller's agents, or for one (`agentId`)."""
    body = json_object()
    refuse_unknown(body, {"jwks", "agentId"}, "fields")
    info = _services().trust.register_keys(current_actor(), body.get("jwks"), string_field(body, "agentId"))
    response = jsonify(info.to_dict())
    response.status_code = 201
    return response


@bp.get("/v1/keys")
@requires("agents:write")
def list_keys() -> Response:
    return jsonify({"items": [info.to_dict() for info in _services().trust.owner_keys.list(current_actor())]})


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
