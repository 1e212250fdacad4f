"""Sign then verify: every algorithm, key rotation, policies, and the properties that matter
(generated cards verify; any single-byte change to the signed content does not)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from signing import (
    CanonicalForm,
    CardFormatError,
    HeaderError,
    Outcome,
    PolicyError,
    PolicyMode,
    SigningKey,
    StaticKeyResolver,
    VerificationPolicy,
    canonicalize,
    generate_key,
    sign_card,
    verify_card,
)
from tests.signing.cards import hybrid, rich_card, v1_cards
from tests.signing.conftest import CARD_ALGS


def header_of(signature: dict[str, Any]) -> dict[str, Any]:
    protected = signature["protected"]
    return json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_sign_then_verify_every_algorithm(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    signed = sign_card(rich_card(), key, jku="https://meteo.example.com/.well-known/jwks.json")
    assert header_of(signed["signatures"][0]) == {
        "alg": alg,
        "kid": key.kid,
        "typ": "JOSE",
        "jku": "https://meteo.example.com/.well-known/jwks.json",
    }
    result = verify_card(signed, StaticKeyResolver([key.public], source="trust-store"))
    assert result.ok
    (signature,) = result.signatures
    assert (signature.outcome, signature.kid, signature.alg, signature.key_source, signature.form) == (
        Outcome.VALID,
        key.kid,
        alg,
        "trust-store",
        CanonicalForm.SDK,
    )
    assert signature.key_thumbprint == key.public.thumbprint


def test_signing_does_not_modify_the_input_and_keeps_existing_signatures(keys: dict[str, SigningKey]) -> None:
    card = rich_card()
    original = copy.deepcopy(card)
    once = sign_card(card, keys["EdDSA"])
    twice = sign_card(once, keys["ES256"], kid="rotated-2026")
    assert card == original and len(once["signatures"]) == 1
    assert twice["signatures"][0] == once["signatures"][0]
    assert header_of(twice["signatures"][1])["kid"] == "rotated-2026"


@pytest.mark.parametrize("form", list(CanonicalForm))
def test_every_form_can_be_signed_and_is_reported(form: CanonicalForm, keys: dict[str, SigningKey]) -> None:
    card = hybrid(rich_card())
    signed = sign_card(card, keys["EdDSA"], form=form)
    (signature,) = verify_card(signed, StaticKeyResolver([keys["EdDSA"].public])).signatures
    assert signature.outcome is Outcome.VALID
    assert signature.form is form or canonicalize(card, signature.form) == canonicalize(card, form)
    assert ("/x_vendor" in signature.uncovered) is (signature.form is not CanonicalForm.PLAIN)


def test_key_rotation_policies(keys: dict[str, SigningKey]) -> None:
    old, new = keys["ES256"], keys["EdDSA"]
    signed = sign_card(sign_card(rich_card(), old), new)
    only_new = StaticKeyResolver([new.public])
    assert verify_card(signed, only_new).ok
    all_policy = VerificationPolicy(mode=PolicyMode.ALL)
    result = verify_card(signed, only_new, all_policy)
    assert not result.ok and [s.outcome for s in result.signatures] == [Outcome.KEY_NOT_FOUND, Outcome.VALID]
    assert verify_card(signed, StaticKeyResolver([old.public, new.public]), all_policy).ok
    assert verify_card(signed, only_new, VerificationPolicy(required_kids=frozenset({new.kid}))).ok
    missing = verify_card(signed, only_new, VerificationPolicy(required_kids=frozenset({old.kid})))
    assert not missing.ok and old.kid in missing.reason


def test_a_card_without_signatures_fails_every_policy(keys: dict[str, SigningKey]) -> None:
    for policy in (VerificationPolicy(), VerificationPolicy(mode="all")):
        result = verify_card(rich_card(), StaticKeyResolver([keys["EdDSA"].public]), policy)
        assert not result.ok and result.signatures == () and "no signatures" in result.reason


def test_header_extras_and_unprotected_header(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(
        rich_card(),
        keys["EdDSA"],
        header_extras={"x-release": "2026.11"},
        unprotected_header={"note": "release pipeline"},
    )
    assert header_of(signed["signatures"][0])["x-release"] == "2026.11"
    assert signed["signatures"][0]["header"] == {"note": "release pipeline"}
    assert verify_card(signed, StaticKeyResolver([keys["EdDSA"].public])).ok
    for extras in ({"alg": "none"}, {"crit": ["b64"]}, {"kid": "x"}):
        with pytest.raises(HeaderError):
            sign_card(rich_card(), keys["EdDSA"], header_extras=extras)
    with pytest.raises(HeaderError):
        sign_card(rich_card(), keys["EdDSA"], unprotected_header={"kid": "other"})


@pytest.mark.parametrize("card", [[], "x", {"name": "x", "signatures": {"a": 1}}])
def test_cards_that_cannot_be_signed_raise_card_format_errors(card: Any, keys: dict[str, SigningKey]) -> None:
    with pytest.raises(CardFormatError):
        sign_card(card, keys["EdDSA"])
    with pytest.raises(CardFormatError):
        verify_card(card, StaticKeyResolver([]))


def test_an_empty_policy_is_an_error() -> None:
    with pytest.raises(PolicyError):
        VerificationPolicy(algorithms=frozenset())
    with pytest.raises(PolicyError):
        VerificationPolicy(forms=())
    with pytest.raises(PolicyError):
        VerificationPolicy(algorithms=frozenset({"HS256"}))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v1_cards(), st.sampled_from(["EdDSA", "ES256"]))
def test_generated_cards_sign_then_verify(card: dict[str, Any], alg: str) -> None:
    key = _property_keys()[alg]
    result = verify_card(sign_card(card, key), StaticKeyResolver([key.public]))
    assert result.ok and result.signatures[0].form is CanonicalForm.SDK


PRINTABLE = [b for b in range(0x20, 0x7F) if b not in b'"\\']


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data())
def test_any_single_byte_change_to_the_signed_content_fails(data: st.DataObject) -> None:
    key = _property_keys()["EdDSA"]
    card = rich_card(2)
    signature = sign_card(card, key)["signatures"]
    payload = canonicalize(card)
    # Any byte of the signed payload, replaced by a printable ASCII byte (most such changes keep it
    # JSON; one that does not is not a card a verifier could be handed).
    position = data.draw(st.integers(0, len(payload) - 1), label="position")
    byte = data.draw(st.sampled_from(PRINTABLE).filter(lambda b: b != payload[position]), label="byte")
    changed = payload[:position] + bytes([byte]) + payload[position + 1 :]
    try:
        tampered = json.loads(changed)
    except ValueError:
        assume(False)
    assume(isinstance(tampered, dict))
    result = verify_card({**tampered, "signatures": signature}, StaticKeyResolver([key.public]))
    assert result.signatures[0].outcome is Outcome.INVALID


_KEYS: dict[str, SigningKey] = {}


def _property_keys() -> dict[str, SigningKey]:
    # Hypothesis tests cannot take function-scoped fixtures; keys are made once per session.
    if not _KEYS:
        _KEYS.update({alg: generate_key(alg) for alg in ("EdDSA", "ES256")})
    return _KEYS


def test_verify_then_countersign_share_the_canonical_payloads(keys: dict[str, SigningKey]) -> None:
    from signing import CardPayloads

    provider, registry = keys["ES256"], keys["EdDSA"]
    card = sign_card(hybrid(rich_card()), provider)
    payloads = CardPayloads(card)
    assert verify_card(card, StaticKeyResolver([provider.public]), payloads=payloads).ok
    shared = sign_card(card, registry, jku="https://registry.example/jwks.json", payloads=payloads)
    # Ed25519 is deterministic: the same payload gives the same signature bytes.
    assert shared == sign_card(card, registry, jku="https://registry.example/jwks.json")
    assert verify_card(shared, StaticKeyResolver([registry.public])).ok
