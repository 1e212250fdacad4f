"""`/.well-known/jwks.json` (the registry's keys, with cache headers) and
`/.well-known/agent-card.json` (Agentdex as an A2A agent, signed by the registry key)."""

from __future__ import annotations

import copy
from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard
from google.protobuf.json_format import ParseDict

from registry.container import Services
from registry.validation import validate_card
from signing import StaticKeyResolver, parse_jwks, verify_card
from tests.registry.trust.trust_helpers import sdk_verify


def test_the_jwks_is_public_cacheable_and_conditional(client: Any) -> None:
    response = client.get("/.well-known/jwks.json")
    assert response.status_code == 200 and response.mimetype == "application/jwk-set+json"
    assert response.headers["Cache-Control"] == "public, max-age=300"
    (key,) = response.json["keys"]
    assert key["kty"] == "OKP" and key["crv"] == "Ed25519" and key["alg"] == "EdDSA" and "d" not in key
    again = client.get("/.well-known/jwks.json", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


def test_the_registry_describes_itself_as_a_signed_a2a_agent(client: Any, services: Services) -> None:
    response = client.get("/.well-known/agent-card.json", base_url="https://registry.example")
    card = response.json
    assert response.headers["Cache-Control"].startswith("public")
    assert [(i["protocolBinding"], i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", "1.0", "https://registry.example/a2a/jsonrpc"),  # from the request
        ("HTTP+JSON", "1.0", "https://registry.example/a2a/rest"),
        ("JSONRPC", "0.3", "https://registry.example/a2a/jsonrpc"),
    ]
    assert (card["protocolVersion"], card["url"], card["preferredTransport"]) == (
        "0.3",
        "https://registry.example/a2a/jsonrpc",
        "JSONRPC",
    )  # 0.3 compatibility fields: the JSON-RPC endpoint
    report = validate_card(card, limits=services.limits)
    assert report.valid and report.protocol_version == "1.0", report.to_dict()
    jwks = client.get("/.well-known/jwks.json").json
    result = verify_card(card, StaticKeyResolver(parse_jwks(jwks)))
    assert result.ok and result.signatures[0].kid == services.registry_keys.active().kid
    sdk_verify(card, jwks)  # and so does an A2A SDK


def test_the_card_is_what_the_official_sdks_server_would_serve_for_it(client: Any) -> None:
    """The 0.3 compatibility fields are the ones a2a-sdk's server derives from the v1.0 card."""
    card = client.get("/.well-known/agent-card.json").json
    del card["signatures"]
    v1 = ParseDict(copy.deepcopy(card), AgentCard(), ignore_unknown_fields=True)
    assert agent_card_to_dict(v1) == card


def test_the_card_declares_what_the_agent_does(client: Any) -> None:
    card = client.get("/.well-known/agent-card.json").json
    assert card["capabilities"] == {"streaming": False, "pushNotifications": False, "extendedAgentCard": False}
    assert [skill["id"] for skill in card["skills"]] == ["find-agents", "verify-card", "register-agent"]
    assert "grpc" not in str(card["supportedInterfaces"]).lower()
    (scheme,) = card["securitySchemes"].values()
    assert scheme["httpAuthSecurityScheme"]["scheme"] == "Bearer" and scheme["type"] == "http"
    needs_token = [skill["id"] for skill in card["skills"] if skill.get("securityRequirements")]
    assert needs_token == ["register-agent"] and "securityRequirements" not in card  # searching is public
