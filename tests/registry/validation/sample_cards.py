"""Minimal valid cards of each flavor, for rule-level tests: each rule's bad card is one of
these with a single change, so the rule under test is the only thing wrong with it."""

from __future__ import annotations

import copy
from typing import Any

_V03: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Recipe Agent",
    "description": "Finds and adapts recipes",
    "url": "https://agent.example.com/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://agent.example.com/a2a", "transport": "JSONRPC"},
        {"url": "https://agent.example.com/grpc", "transport": "GRPC"},
    ],
    "provider": {"organization": "Example Org", "url": "https://example.com"},
    "version": "1.2.0",
    "documentationUrl": "https://example.com/docs",
    "iconUrl": "https://example.com/icon.png",
    "capabilities": {"streaming": True, "pushNotifications": False},
    "securitySchemes": {
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://example.com/.well-known/openid-configuration"},
    },
    "security": [{"oidc": ["openid"]}],
    "defaultInputModes": ["text/plain", "application/json"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "find-recipe",
            "name": "Find a recipe",
            "description": "Finds a recipe for a dish",
            "tags": ["cooking", "recipes"],
            "examples": ["A bread recipe, please"],
            "security": [{"oidc": []}],
        },
    ],
    "supportsAuthenticatedExtendedCard": True,
}

_V10: dict[str, Any] = {
    "name": "Recipe Agent",
    "description": "Finds and adapts recipes",
    "supportedInterfaces": [
        {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "grpc://agent.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ],
    "provider": {"organization": "Example Org", "url": "https://example.com"},
    "version": "1.2.0",
    "capabilities": {"streaming": True, "extendedAgentCard": True},
    "securitySchemes": {
        "oidc": {
            "openIdConnectSecurityScheme": {"openIdConnectUrl": "https://example.com/.well-known/openid-configuration"}
        },
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {
                    "clientCredentials": {"tokenUrl": "https://example.com/token", "scopes": {"read": "Read recipes"}}
                }
            }
        },
    },
    "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "find-recipe",
            "name": "Find a recipe",
            "description": "Finds a recipe for a dish",
            "tags": ["cooking"],
            "inputModes": ["text/plain"],
            "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}],
        },
    ],
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2lnbmF0dXJl"}],
}

_V02: dict[str, Any] = {
    "name": "Facts Agent",
    "description": "Tells interesting facts",
    "url": "https://facts.example.com/a2a",
    "version": "1.0.0",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "give-facts", "name": "Facts", "description": "Gives a fact", "tags": ["facts"]}],
}

_V01: dict[str, Any] = {
    "name": "Route Planner",
    "url": "https://routes.example.com/a2a",
    "version": "1.0.0",
    "capabilities": {"streaming": False},
    "authentication": {"schemes": ["Bearer"]},
    "skills": [{"id": "plan", "name": "Plan a route"}],
}


def v03() -> dict[str, Any]:
    return copy.deepcopy(_V03)


def v10() -> dict[str, Any]:
    return copy.deepcopy(_V10)


def v02() -> dict[str, Any]:
    return copy.deepcopy(_V02)


def v01() -> dict[str, Any]:
    return copy.deepcopy(_V01)


def hybrid() -> dict[str, Any]:
    """A v1.0 card with the 0.3 compatibility fields, in the shape the a2a-sdk 1.x serves
    (response_helpers.agent_card_to_dict): the 0.3 view is derived from the 0.3 interface."""
    card = v10()
    card["supportedInterfaces"].append(
        {"url": "https://agent.example.com/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    )
    card["securitySchemes"]["oidc"].update(
        {"type": "openIdConnect", "openIdConnectUrl": "https://example.com/.well-known/openid-configuration"}
    )
    card["securitySchemes"]["oauth"].update(
        {
            "type": "oauth2",
            "flows": {
                "clientCredentials": {"tokenUrl": "https://example.com/token", "scopes": {"read": "Read recipes"}}
            },
        }
    )
    card.update(
        {
            "url": "https://agent.example.com/v03",
            "preferredTransport": "JSONRPC",
            "protocolVersion": "0.3",
            "security": [{"oidc": ["openid"]}],
            "supportsAuthenticatedExtendedCard": True,
        }
    )
    return card
