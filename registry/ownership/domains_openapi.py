"""The domain proofs' part of the OpenAPI document (merged by `registry.api.openapi`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from registry.ownership.domains_model import STATUSES
from registry.ownership.proofs import METHODS

DOMAIN = {
    "name": "domain",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "the domain (any case, Unicode or IDNA; `host:port` where plain http is allowed)",
}
_TIME = {"type": ["string", "null"], "format": "date-time"}

SCHEMAS: dict[str, Any] = {
    "DomainRequest": {
        "type": "object",
        "required": ["domain"],
        "properties": {
            "domain": {"type": "string", "description": "e.g. example.com"},
            "includeSubdomains": {
                "type": "boolean",
                "description": "also the names under it; granted by a DNS proof of this domain only",
            },
        },
    },
    "DomainVerifyRequest": {
        "type": "object",
        "required": ["method"],
        "properties": {"method": {"enum": list(METHODS)}},
    },
    "Domain": {
        "type": "object",
        "properties": {
            "domain": {"type": "string"},
            "owner": {"type": "string"},
            "status": {"enum": list(STATUSES)},
            "includeSubdomains": {"type": "boolean"},
            "subdomainsCovered": {"type": "boolean"},
            "method": {"enum": [*METHODS, None]},
            "reason": {"type": ["string", "null"], "description": "why it lapsed, or why the last proof failed"},
            **{name: _TIME for name in ("createdAt", "verifiedAt", "checkedAt", "lapsedAt")},
            "challenges": {
                "type": "object",
                "properties": {
                    "http": {
                        "type": "object",
                        "description": "serve `value` (text, status 200) at `url`",
                        "properties": {"url": {"type": "string"}, "value": {"type": "string"}},
                    },
                    "dns": {
                        "type": ["object", "null"],
                        "description": "a TXT record named `name` holding `value` (null for an IP address)",
                        "properties": {
                            "name": {"type": "string"},
                            "type": {"const": "TXT"},
                            "value": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
}

Op = Callable[..., dict[str, Any]]


def openapi_paths(op: Op, _q: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    return {
        "/v1/domains": {
            "post": op(
                "Add a domain to prove (201; 200 when added before): its HTTP and DNS challenges",
                body="DomainRequest",
                ok="201",
                auth=True,
                errors=("400", "401", "403", "422"),
            ),
            "get": op("Your domains (an admin: everyone's)", auth=True, errors=("401", "403")),
        },
        "/v1/domains/{domain}": {
            "get": op("One of your domains", params=[DOMAIN], auth=True, errors=("401", "403", "404", "422")),
            "delete": op(
                "Remove a domain (a proven one is released)",
                params=[DOMAIN],
                ok="204",
                auth=True,
                errors=("401", "403", "404", "422"),
            ),
        },
        "/v1/domains/{domain}/verify": {
            "post": op(
                "Check one challenge; proven, the domain is yours (taken over from a previous holder). "
                "422 codes: challenge_not_found, challenge_mismatch, challenge_unreachable, proof_method_unavailable",
                params=[DOMAIN],
                body="DomainVerifyRequest",
                auth=True,
                errors=("400", "401", "403", "404", "422"),
            ),
        },
    }
