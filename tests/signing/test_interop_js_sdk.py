"""Interoperability with the official JavaScript SDK (`@a2a-js/sdk`) as a real peer: the canonical
payloads are byte-identical on real v1.0 cards and tricky ones, cards Agentdex signs verify with
its `verifyAgentCardSignature`, and cards its `generateAgentCardSignature` signs verify with Agentdex,
for every card algorithm."""

from __future__ import annotations

from typing import Any

import pytest

from signing import (
    CanonicalForm,
    Outcome,
    SigningKey,
    StaticKeyResolver,
    canonicalize,
    public_jwks,
    sign_card,
    verify_card,
)
from tests.signing.cards import hybrid, rich_card
from tests.signing.conftest import CARD_ALGS
from tests.signing.test_interop_sdk import CONSISTENT_V1_CARDS, dual_version_card
from tests.support.js_sdk import js_payloads, js_signed, js_verifies


def tricky_card() -> dict[str, Any]:
    card = rich_card()
    card["capabilities"]["extensions"][0]["params"].update(
        {
            "int": 7,
            "big": 2**53,
            "float": 0.1 + 0.2,
            "exp": 1e-9,
            "emoji": "😂 דּ",
            "😂": "astral key",
            "דּ": "bmp key",
            "ctl": "\u0007\u007f\u2028",
            "empty": "",
            "none": None,
            "no": False,
            "zero": 0,
        }
    )
    return card


def test_payloads_are_byte_identical_to_the_js_sdk() -> None:
    cards = [card for _, card in CONSISTENT_V1_CARDS] + [
        rich_card(),
        hybrid(rich_card()),
        dual_version_card(),
        tricky_card(),
    ]
    ours = [canonicalize(card) for card in cards]
    assert ours == js_payloads(cards)


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_cards_signed_by_agentdex_verify_with_the_js_sdk(alg: str, keys: dict[str, SigningKey]) -> None:
    signed = sign_card(hybrid(rich_card()), keys[alg])
    assert js_verifies(signed, public_jwks([keys[alg]]))
    signed["description"] += " (changed)"
    assert not js_verifies(signed, public_jwks([keys[alg]]))


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_cards_signed_by_the_js_sdk_verify_with_agentdex(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    result = verify_card(js_signed(dual_version_card(), key), StaticKeyResolver([key.public]))
    assert result.ok, result.to_dict()
    (signature,) = result.signatures
    assert (signature.outcome, signature.kid, signature.alg, signature.form) == (
        Outcome.VALID,
        key.kid,
        alg,
        CanonicalForm.SDK,
    )
