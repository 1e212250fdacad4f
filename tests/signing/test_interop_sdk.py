"""Interoperability with the official `a2a-sdk` (PyPI) as a real peer: cards Agentdex signs
verify with the SDK's `create_signature_verifier`, cards the SDK's `create_agent_card_signer`
signs verify with Agentdex, and the canonical payloads are byte-identical."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard
from a2a.utils.signing import _canonicalize_agent_card, create_agent_card_signer, create_signature_verifier
from google.protobuf.json_format import MessageToDict, ParseDict
from hypothesis import HealthCheck, assume, given, settings
from jwt.api_jwk import PyJWK

from signing import (
    CanonicalForm,
    Outcome,
    SigningKey,
    StaticKeyResolver,
    canonical_payload,
    canonicalize,
    private_jwk,
    public_jwk,
    sign_card,
    verify_card,
)
from tests.signing.cards import hybrid, rich_card, v1_cards
from tests.signing.conftest import CARD_ALGS, real_cards


def sdk_payload(card: dict[str, Any]) -> bytes:
    """The bytes a2a-sdk signs and verifies for a card given as JSON (parsed as its client does)."""
    return _canonicalize_agent_card(parse_agent_card(copy.deepcopy(card))).encode("utf-8")


def sdk_sign(proto: AgentCard, key: SigningKey, **header: str) -> AgentCard:
    signer = create_agent_card_signer(
        PyJWK(private_jwk(key)), {"alg": key.algorithm.value, "kid": key.kid, "typ": "JOSE", **header}
    )  # type: ignore[typeddict-item]
    return signer(proto)


def sdk_verify(card: dict[str, Any], key: SigningKey) -> None:
    """Raises a2a.utils.signing.SignatureVerificationError unless a signature verifies."""
    verifier = create_signature_verifier(lambda kid, jku: PyJWK(public_jwk(key)), [key.algorithm.value])
    verifier(parse_agent_card(copy.deepcopy(card)))


def dual_version_card() -> dict[str, Any]:
    """A v1.0 card that also offers a 0.3 interface, so the SDK's server serves 0.3 compatibility fields."""
    card = rich_card()
    card["supportedInterfaces"].append(
        {"url": "https://meteo.example.com/a2a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    )
    return card


V1_REAL_CARDS = [
    (name, card) for name, card in real_cards() if "supportedInterfaces" in card or "supported_interfaces" in card
]


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_cards_signed_by_agentdex_verify_with_the_sdk(alg: str, keys: dict[str, SigningKey]) -> None:
    for card in (rich_card(), hybrid(rich_card()), dual_version_card()):
        sdk_verify(sign_card(card, keys[alg]), keys[alg])


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_cards_signed_by_the_sdk_verify_with_agentdex(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    proto = sdk_sign(
        ParseDict(dual_version_card(), AgentCard(), ignore_unknown_fields=True), key, jku="https://x.example/jwks"
    )
    for served in (MessageToDict(proto), agent_card_to_dict(proto)):
        result = verify_card(served, StaticKeyResolver([key.public]))
        assert result.ok, result.to_dict()
        (signature,) = result.signatures
        assert (signature.outcome, signature.kid, signature.alg, signature.form) == (
            Outcome.VALID,
            key.kid,
            alg,
            CanonicalForm.SDK,
        )


def test_the_sdk_served_card_is_reduced_to_its_v1_fields(keys: dict[str, SigningKey]) -> None:
    proto = sdk_sign(ParseDict(dual_version_card(), AgentCard(), ignore_unknown_fields=True), keys["ES256"])
    served = agent_card_to_dict(proto)
    assert {"url", "protocolVersion", "preferredTransport", "security"} <= served.keys()  # 0.3 compatibility fields
    (signature,) = verify_card(served, StaticKeyResolver([keys["ES256"].public])).signatures
    assert signature.outcome is Outcome.VALID
    assert {"/url", "/protocolVersion", "/preferredTransport", "/security"} <= set(signature.uncovered)
    proto.ClearField("signatures")
    assert canonicalize(served) == _canonicalize_agent_card(proto).encode()


# a2a-java__6 is an inconsistent hybrid (INVALID in INDEX.json): the SDK's parser rewrites its
# 0.3-style security schemes before canonicalising, Agentdex keeps the card's v1.0 fields as written.
INCONSISTENT_HYBRID = "a2a-java__6.json"
CONSISTENT_V1_CARDS = [(name, card) for name, card in V1_REAL_CARDS if name != INCONSISTENT_HYBRID]


@pytest.mark.parametrize("name,card", CONSISTENT_V1_CARDS, ids=[name for name, _ in CONSISTENT_V1_CARDS])
def test_payloads_are_byte_identical_for_real_v1_cards(name: str, card: dict[str, Any]) -> None:
    assert canonicalize(card) == sdk_payload(card)


def test_the_inconsistent_hybrid_card_is_the_one_known_payload_difference() -> None:
    card = dict(V1_REAL_CARDS)[INCONSISTENT_HYBRID]
    ours, theirs = json.loads(canonicalize(card)), json.loads(sdk_payload(card))
    assert "securitySchemes" not in ours  # its 0.3-shaped schemes are not v1.0 SecuritySchemes
    assert theirs.pop("securitySchemes") == {
        "google": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"
            }
        }
    }
    assert ours == theirs


def test_payloads_are_byte_identical_for_non_ascii_text_and_numbers_in_extension_params() -> None:
    card = rich_card()
    card["capabilities"]["extensions"][0]["params"].update(
        {
            "int": 7,
            "big": 2**60,
            "huge": 10**30,
            "float": 0.1 + 0.2,
            "neg0": -0.0,
            "exp": 1e-9,
            "emoji": "😂 דּ",
            "😂": "astral key",
            "דּ": "bmp key",
            "ctl": "\u0007\u007f\u2028",
        }
    )
    assert canonicalize(card) == sdk_payload(card)


def test_ed25519_signatures_are_byte_identical_to_the_sdk(keys: dict[str, SigningKey]) -> None:
    # Ed25519 is deterministic: same header + same payload => same signature bytes.
    key = keys["EdDSA"]
    card = rich_card()
    ours = sign_card(card, key)["signatures"][0]
    theirs = MessageToDict(sdk_sign(ParseDict(card, AgentCard(), ignore_unknown_fields=True), key))["signatures"][0]
    assert ours == theirs


def test_a_card_with_nothing_left_is_an_empty_object() -> None:
    # The one known difference: a2a-sdk canonicalises a card whose every field is empty as `null`;
    # Agentdex writes `{}` (the JCS of an object, as @a2a-js/sdk does). Such a card says nothing.
    card = {"supportedInterfaces": [], "name": ""}
    assert (canonicalize(card), sdk_payload(card)) == (b"{}", b"null")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v1_cards())
def test_payloads_are_byte_identical_for_generated_v1_cards(card: dict[str, Any]) -> None:
    expected = sdk_payload(card)
    assume(expected != b"null")
    assert canonicalize(card) == expected
    assert canonical_payload(card).schema_version == "1.0"
