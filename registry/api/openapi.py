"""The OpenAPI 3.1 document served at `/openapi.json`."""

from __future__ import annotations

from typing import Any

from registry import events, ownership, relay
from registry.api import audit
from registry.trust import SIGNATURE_STATES

ERROR = {"$ref": "#/components/schemas/Error"}


def _op(
    summary: str,
    *,
    params: list[dict[str, Any]] | None = None,
    body: str | None = None,
    ok: str = "200",
    auth: bool = False,
    errors: tuple[str, ...] = ("400", "404"),
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {ok: {"description": "success"}}}
    if params and AGENT_ID in params:  # a prefix too short (400) or shared by several agents (409)
        errors = tuple(sorted({*errors, "400", "404", "409"}))
    for status in errors:
        op["responses"][status] = {"description": "error", "content": {"application/json": {"schema": ERROR}}}
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
        }
    if auth:
        op["security"] = [{"bearer": []}]
    return op


def _q(name: str, schema: dict[str, Any], description: str, repeat: bool = False) -> dict[str, Any]:
    if repeat:
        schema = {"type": "array", "items": schema}
    return {"name": name, "in": "query", "schema": schema, "description": description, "explode": True}


AGENT_ID = {
    "name": "agent_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "the agent's id, or a unique prefix of it (at least 8 characters; 409 ambiguous_id if shared)",
}
TOKEN_ID = {"name": "token_id", "in": "path", "required": True, "schema": {"type": "integer"}}
SEARCH = [
    _q("tag", {"type": "string"}, "skill tag, case-insensitive; repeatable, at most 32", repeat=True),
    _q("match", {"enum": ["all", "any"]}, "all tags (default) or any"),
    _q("q", {"type": "string"}, "text over names, descriptions, skills (every word, as a prefix)"),
    _q("skill", {"type": "string"}, "skill id"),
    _q("inputMode", {"type": "string"}, "media type accepted"),
    _q("outputMode", {"type": "string"}, "media type produced"),
    _q("capability", {"enum": ["streaming", "pushNotifications", "extendedAgentCard"]}, "repeatable", repeat=True),
    _q("protocolVersion", {"type": "string"}, "e.g. 1.0 or 0.3"),
    _q(
        "status",
        {"enum": ["active", "deprecated", "any", "pending", "rejected"]},
        "default active; any: active or deprecated; pending, rejected: entries in review, with a token, "
        "those the caller may see (theirs, on their proven domains, all for an admin)",
    ),
    _q("updatedSince", {"type": "string", "format": "date-time"}, "for mirroring"),
    _q(
        "health",
        {"enum": ["up", "degraded", "down", "unknown"]},
        "rolled-up health state of the agent's JSON-RPC endpoints",
    ),
    _q("includeDead", {"type": "boolean"}, "also agents down longer than the operator's limit (hidden by default)"),
    _q(
        "signature",
        {"enum": list(SIGNATURE_STATES)},
        "signature state of the current card (verified: a signature verified under the key policy)",
    ),
    _q("limit", {"type": "integer", "minimum": 1, "maximum": 200}, "default 50"),
    _q("cursor", {"type": "string"}, "nextCursor of the previous page"),
]


def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Agentdex", "version": "1", "description": "Registry and discovery for A2A agents"},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message", "details"],
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                                "details": {"type": "object"},
                            },
                        }
                    },
                },
                "Registration": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "format": "uri"},
                        "card": {"type": "object"},
                        "cardUrl": {"type": "string", "format": "uri"},
                        "jwksUrl": {
                            "type": "string",
                            "format": "uri",
                            "description": "the agent's own JWKS (key source)",
                        },
                    },
                },
                "KeyRegistration": {
                    "type": "object",
                    "required": ["jwks"],
                    "properties": {
                        "jwks": {"type": "object", "description": "a public JWK Set"},
                        "agentId": {"type": "string", "description": "only for this agent (default: all the caller's)"},
                    },
                },
                "Import": {
                    "type": "object",
                    "required": ["items"],
                    "properties": {
                        "items": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["card", "cardUrl"],
                                "additionalProperties": False,
                                "properties": {
                                    "card": {"type": "object"},
                                    "cardUrl": {"type": "string"},
                                    "jwksUrl": {
                                        "type": "string",
                                        "format": "uri",
                                        "description": "the agent's own JWKS",
                                    },
                                },
                            },
                        }
                    },
                },
                "StatusChange": {
                    "type": "object",
                    "properties": {
                        "status": {"enum": ["active", "deprecated"]},
                        "statusMessage": {"type": "string"},
                        "jwksUrl": {"type": ["string", "null"], "format": "uri"},
                    },
                },
                "AgentCard": {"type": "object"},
                "Token": {
                    "type": "object",
                    "description": "an API token as its owner or an admin sees it: never the token, nor its hash",
                    "properties": {
                        "id": {"type": "integer"},
                        "name": {"type": "string"},
                        "principal": {"type": "string"},
                        "scopes": {
                            "type": "array",
                            "items": {"enum": ["agents:write", "relay", "metrics:read", "admin"]},
                        },
                        "domains": {
                            "type": ["array", "null"],
                            "items": {"type": "string"},
                            "description": "hosts (and their subdomains) whose agents the token may change; null: any",
                        },
                        "prefix": {"type": "string", "description": "the token's first characters"},
                        "createdAt": {"type": "string", "format": "date-time"},
                        "lastUsedAt": {"type": ["string", "null"], "format": "date-time"},
                        "expiresAt": {"type": ["string", "null"], "format": "date-time"},
                        "revokedAt": {"type": ["string", "null"], "format": "date-time"},
                    },
                },
                **relay.OPENAPI_SCHEMAS,
                **events.OPENAPI_SCHEMAS,
                **ownership.DOMAINS_OPENAPI_SCHEMAS,
                **ownership.AGENTS_OPENAPI_SCHEMAS,
                **audit.OPENAPI_SCHEMAS,
            },
        },
        "paths": {
            "/v1/agents": {
                "get": _op("Search agents", params=SEARCH, errors=("400", "422")),
                "post": _op(
                    "Register an agent by URL or uploaded card; a domain's URL also registers every A2A agent its "
                    "ARD manifest lists (the answer then holds `manifest`: what was listed, registered, updated, "
                    "refused with each rule; and `domainCard` when the domain's own card was not registered now; "
                    "201 when anything was registered, else 200)",
                    body="Registration",
                    ok="201",
                    auth=True,
                    errors=("400", "401", "403", "409", "413", "422", "502", "504"),
                ),
            },
            "/v1/agents/import": {
                "post": _op(
                    "Register many uploaded cards", body="Import", auth=True, errors=("400", "401", "413", "422")
                )
            },
            "/v1/agents/{agent_id}": {
                "get": _op("One agent", params=[AGENT_ID]),
                "patch": _op(
                    "Set status and status message",
                    params=[AGENT_ID],
                    body="StatusChange",
                    auth=True,
                    errors=("400", "401", "403", "404", "422"),
                ),
                "delete": _op("Remove an agent", params=[AGENT_ID], ok="204", auth=True, errors=("401", "403", "404")),
            },
            "/v1/agents/{agent_id}/card": {
                "get": _op(
                    "The current card, verbatim; with endorsed=true, with the registry's signature appended",
                    params=[
                        AGENT_ID,
                        _q("version", {"type": "integer"}, "a stored version"),
                        _q("endorsed", {"type": "boolean"}, "append the registry's endorsement (JWS)"),
                    ],
                ),
                "put": _op(
                    "Push a new card version",
                    params=[AGENT_ID],
                    body="AgentCard",
                    auth=True,
                    errors=("400", "401", "403", "404", "413", "422"),
                ),
            },
            "/v1/agents/{agent_id}/versions": {"get": _op("Card history with drift", params=[AGENT_ID])},
            "/v1/agents/{agent_id}/refresh": {
                "post": _op(
                    "Re-fetch the card now",
                    params=[AGENT_ID],
                    auth=True,
                    errors=("401", "403", "404", "422", "502", "504"),
                )
            },
            "/v1/agents/{agent_id}/health": {
                "get": _op(
                    "Health roll-up {state, since, checkedAt, latencyMs, reason, uptime24h} and recent checks, newest first",
                    params=[AGENT_ID, _q("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "default 50")],
                )
            },
            "/v1/agents/{agent_id}/check": {
                "post": _op(
                    "Probe the agent's JSON-RPC endpoints now (GetTask / tasks/get)",
                    params=[AGENT_ID],
                    auth=True,
                    errors=("401", "403", "404", "409"),
                )
            },
            "/v1/agents/{agent_id}/listings": {
                "get": _op(
                    "Which domains' ARD manifests list the agent: domain, manifest URL, catalog, identifier, "
                    "whether it is still listed and whether the crawl registered it",
                    params=[AGENT_ID],
                )
            },
            "/v1/agents/{agent_id}/signatures": {
                "get": _op(
                    "Signature checks of the current card (or a version): state, kids, and per signature the outcome, "
                    "kid, alg, key source, canonical form and uncovered fields",
                    params=[AGENT_ID, _q("version", {"type": "integer"}, "a stored version")],
                )
            },
            "/v1/keys": {
                "get": _op("JWKS the caller registered", auth=True, errors=("401",)),
                "post": _op(
                    "Register a public JWKS that verifies the caller's cards (all agents, or one)",
                    body="KeyRegistration",
                    ok="201",
                    auth=True,
                    errors=("400", "401", "403", "404", "422"),
                ),
            },
            "/v1/keys/{key_id}": {
                "delete": _op(
                    "Remove a registered JWKS (the cards it verified are verified again)",
                    params=[{"name": "key_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                    ok="204",
                    auth=True,
                    errors=("401", "403", "404"),
                )
            },
            "/.well-known/jwks.json": {
                "get": _op("The registry's public keys (active, and retired within their grace period)", errors=())
            },
            "/.well-known/agent-card.json": {"get": _op("Agentdex as an A2A agent: its own card, signed", errors=())},
            "/v1/tags": {"get": _op("Tags with counts", params=[_q("prefix", {"type": "string"}, "tag prefix")])},
            "/v1/validate": {
                "post": _op("Validate a card without storing it", body="AgentCard", errors=("400", "413"))
            },
            "/v1/tokens": {
                "get": _op(
                    "The caller's API tokens (an admin: all): {items: [Token], nextCursor}, oldest first; revoked ones "
                    "with includeRevoked",
                    params=[
                        _q("includeRevoked", {"type": "boolean"}, "also revoked tokens (default false)"),
                        _q("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "default 100"),
                        _q("cursor", {"type": "string"}, "nextCursor of the previous page"),
                    ],
                    auth=True,
                    errors=("400", "401", "403", "422"),
                )
            },
            "/v1/tokens/{token_id}": {
                "delete": _op(
                    "Revoke one of the caller's tokens (an admin: any; another's is 404); answers the Token with "
                    "revokedAt and revokedNow (false: it was revoked before). Idempotent; a revoked token is "
                    "refused with 401 token_revoked",
                    params=[TOKEN_ID],
                    auth=True,
                    errors=("401", "403", "404"),
                )
            },
            **relay.openapi_paths(_op, _q),
            **events.openapi_paths(_op, _q),
            **audit.openapi_paths(_op, _q),
            **ownership.domains_openapi_paths(_op, _q),
            **ownership.agents_openapi_paths(_op, AGENT_ID),
        },
    }
