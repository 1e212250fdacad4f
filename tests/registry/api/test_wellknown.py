"""`/.well-known/jwks.json` (the registry's keys, with cache headers) and
`/.well-known/agent-card.json` (Agentdex as an A2A agent, signed by the registry key)."""

from __future__ import annotations

from typing import Any

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
    assert card["supportedInterfaces"][0]["url"] == "https://registry.example/v1"  # from the request
    assert (card["protocolVersion"], card["url"], card["preferredTransport"]) == (
        "0.3.0",
        "https://registry.example/v1",
        "HTTP+JSON",
    )  # 0.3 compatibility fields
    report = validate_card(card, limits=services.limits)
    assert report.valid and report.protocol_version == "1.0", report.to_dict()
    jwks = client.get("/.well-known/jwks.json").json
    result = verify_card(card, StaticKeyResolver(parse_jwks(jwks)))
    assert result.ok and result.signatures[0].kid == services.registry_keys.active().kid
    sdk_verify(card, jwks)  # and so does an A2A SDK
