"""`/v1/domains`: add a domain (its two challenges), prove it, list, show and remove entries.

Any token with `agents:write` (or `admin`) may prove domains for its principal: proving a domain is
what an agent operator does before registering agents on it. An admin lists and removes everyone's.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.auth import requires
from registry.errors import InvalidRequest
from registry.ownership.domains_service import DomainService
from registry.ownership.proofs import METHODS
from registry.request_input import current_actor, json_object, refuse_unknown, string_field

bp = Blueprint("domains", __name__, url_prefix="/v1/domains")


def _domains() -> DomainService:
    service: DomainService = current_app.extensions["agentdex"].domains.service
    return service


@bp.post("")
@requires("agents:write")
def add_domain() -> tuple[Response, int]:
    body = json_object()
    refuse_unknown(body, {"domain", "includeSubdomains"}, "fields")
    domain = string_field(body, "domain", required=True) or ""
    view, created = _domains().add(current_actor(), domain, include_subdomains=_flag(body, "includeSubdomains"))
    return jsonify(view.to_dict()), 201 if created else 200


@bp.post("/<domain>/verify")
@requires("agents:write")
def verify_domain(domain: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"method"}, "fields")
    method = string_field(body, "method", required=True)
    if method not in METHODS:
        raise InvalidRequest(f"method must be one of {list(METHODS)}", {"method": method})
    return jsonify(_domains().verify(current_actor(), domain, method).to_dict())


@bp.get("")
@requires("agents:write")
def list_domains() -> Response:
    refuse_unknown(request.args.keys(), (), "query parameters")
    return jsonify({"items": [view.to_dict() for view in _domains().listed(current_actor())]})


@bp.get("/<domain>")
@requires("agents:write")
def show_domain(domain: str) -> Response:
    return jsonify(_domains().get(current_actor(), domain).to_dict())


@bp.delete("/<domain>")
@requires("agents:write")
def remove_domain(domain: str) -> Response:
    _domains().remove(current_actor(), domain)
    return Response(status=204)


def _flag(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise InvalidRequest(f"{name} must be true or false")
    return value
