"""Well-known URIs (RFC 8615): the registry's public keys and its own Agent Card."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Blueprint, Response, current_app, request

bp = Blueprint("wellknown", __name__, url_prefix="/.well-known")

# Clients may keep the key set this long; after `agentdex keys rotate` a client that meets an
# unknown kid should fetch it again (the retired key stays published for the grace period).
JWKS_MAX_AGE = 300
CARD_MAX_AGE = 300


def _services() -> Any:
    return current_app.extensions["agentdex"]


def _cached_json(document: Any, mimetype: str, max_age: int) -> Response:
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    etag = hashlib.sha256(body).hexdigest()[:32]
    response = Response(body, mimetype=mimetype)
    response.headers["Cache-Control"] = f"public, max-age={max_age}"
    response.set_etag(etag)
    response.make_conditional(request)
    return response


def _base_url() -> str:
    return _services().trust.endorser.base_url(request.host_url) or request.host_url.rstrip("/")


@bp.get("/jwks.json")
def jwks() -> Response:
    services = _services()
    services.registry_keys.active(services.settings.trust.endorsement_alg)  # the first key exists before it is needed
    return _cached_json(services.registry_keys.jwks(), "application/jwk-set+json", JWKS_MAX_AGE)


@bp.get("/agent-card.json")
def agent_card() -> Response:
    return _cached_json(_services().registry_card.signed(_base_url()), "application/json", CARD_MAX_AGE)
