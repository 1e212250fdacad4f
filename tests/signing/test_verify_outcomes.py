"""Every way a signature can fail has its own outcome and an actionable detail; nothing crashes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signing import (
    CardFormatError,
    ChainResolver,
    JwksUrlResolver,
    Outcome,
    SigningKey,
    StaticKeyResolver,
    VerificationPolicy,
    generate_key,
    parse_jwks,
    public_jwk,
    sign_card,
    verification_key,
    verify_card,
)
from signing.jws import b64url_encode
from tests.signing.cards import json_values, rich_card
from tests.signing.conftest import TESTDATA, load_json

SPEC_CARDS = ["a2a-spec__6.json", "a2a-spec__5.json", "a2a-java__2.json", "a2a-dotnet__1.json"]


def b64(data: bytes | str) -> str:
    return b64url_encode(data.encode() if isinstance(data, str) else data)


def outcome_of(entry: Any, resolver: Any = None, card: dict[str, Any] | None = None, **policy: Any) -> Any:
    card = {**(card or rich_card(1)), "signatures": [entry]}
    result = verify_card(card, resolver or StaticKeyResolver([]), VerificationPolicy(**policy))
    assert not result.ok
    return result.signatures[0]


@pytest.mark.parametrize("file", SPEC_CARDS)
def test_the_spec_sample_signature_is_key_not_found_never_valid(file: str) -> None:
    card = load_json(TESTDATA / "cards" / file)
    (signature,) = verify_card(card, StaticKeyResolver([])).signatures
    assert (signature.outcome, signature.kid, signature.alg) == (Outcome.KEY_NOT_FOUND, "key-1", "ES256")
    # Its jku (https://example.com/agent/jwks.json) is not followed unless that origin is allowed.
    (signature,) = verify_card(card, JwksUrlResolver(allowed_origins=["https://registry.example"])).signatures
    assert signature.outcome is Outcome.KEY_NOT_FOUND and "not an allowed origin" in signature.detail
    impostor = generate_key("ES256", kid="key-1")
    (signature,) = verify_card(card, StaticKeyResolver([impostor.public])).signatures
    assert signature.outcome is Outcome.INVALID


@pytest.mark.parametrize(
    "entry,needle",
    [
        ("not an object", "JSON object"),
        ({"signature": "AA"}, "base64url"),
        ({"protected": "e30=", "signature": "AA"}, "base64url"),
        ({"protected": b64("not json"), "signature": "AA"}, "not UTF-8 JSON"),
        ({"protected": b64(b"\xff\xfe"), "signature": "AA"}, "not UTF-8 JSON"),
        ({"protected": b64("[1]"), "signature": "AA"}, "not a JSON object"),
        ({"protected": b64('{"kid":"k"}'), "signature": "AA"}, "no alg"),
        ({"protected": b64('{"alg":"ES256","alg":"ES256"}'), "signature": "AA"}, "repeats"),
        ({"protected": b64('{"alg":"ES256","kid":7}'), "signature": "AA"}, "kid"),
        ({"protected": b64('{"alg":"ES256"}'), "signature": "###"}, "base64url"),
        ({"protected": b64('{"alg":"ES256"}'), "signature": "A" * 5000}, "longer than"),
        ({"protected": b64('{"alg":"ES256","x":"' + "a" * 5000 + '"}'), "signature": "AA"}, "longer than"),
        ({"protected": b64('{"alg":"ES256"}'), "header": {"alg": "EdDSA"}, "signature": "AA"}, "both protected"),
        ({"protected": b64('{"kid":"k"}'), "header": {"alg": "EdDSA"}, "signature": "AA"}, "protected header"),
        ({"protected": b64('{"alg":"ES256"}'), "header": [], "signature": "AA"}, "unprotected header"),
        ({"protected": b64('{"alg":"ES256","crit":[]}'), "signature": "AA"}, "crit"),
    ],
)
def test_malformed_signatures(entry: Any, needle: str) -> None:
    signature = outcome_of(entry)
    assert signature.outcome is Outcome.MALFORMED and needle in signature.detail


@pytest.mark.parametrize(
    "header,needle",
    [
        ({"alg": "none"}, "none"),
        ({"alg": "HS256"}, "HMAC"),
        ({"alg": "ES999"}, "not supported"),
        ({"alg": "ES256", "crit": ["exp"], "exp": 1}, "crit"),
        ({"alg": "ES256", "b64": False, "crit": ["b64"]}, "crit"),
        ({"alg": "EdDSA", "b64": False}, "b64"),
    ],
)
def test_refused_headers_are_unsupported(header: dict[str, Any], needle: str) -> None:
    signature = outcome_of({"protected": b64(json.dumps({**header, "kid": "k"})), "signature": "AA"})
    assert signature.outcome is Outcome.UNSUPPORTED and needle in signature.detail
    assert signature.kid == "k" and signature.alg == header["alg"]


def test_alg_outside_the_policy_is_unsupported(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(rich_card(1), keys["RS256"])
    signature = outcome_of(
        signed["signatures"][0], StaticKeyResolver([keys["RS256"].public]), algorithms=frozenset({"EdDSA", "ES256"})
    )
    assert signature.outcome is Outcome.UNSUPPORTED and "policy" in signature.detail


def test_the_key_decides_the_algorithm(keys: dict[str, SigningKey]) -> None:
    # An EdDSA signature presented with an ES256 header, or checked against an RSA key, never verifies.
    signed = sign_card(rich_card(1), keys["EdDSA"])
    entry = dict(signed["signatures"][0], protected=b64(json.dumps({"alg": "RS256", "kid": keys["EdDSA"].kid})))
    signature = outcome_of(entry, StaticKeyResolver([keys["EdDSA"].public]))
    assert signature.outcome is Outcome.UNSUPPORTED and "does not admit RS256" in signature.detail
    rsa_as_kid = verification_key(keys["RS256"].public.public_key, kid=keys["EdDSA"].kid)
    signature = outcome_of(signed["signatures"][0], StaticKeyResolver([rsa_as_kid]))
    assert signature.outcome is Outcome.UNSUPPORTED and "RSA" in signature.detail


@pytest.mark.filterwarnings("ignore:Key size should be:UserWarning")
def test_keys_too_weak_for_their_algorithm_are_refused() -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    jwk = public_jwk(verification_key(weak.public_key(), kid="weak"))
    key_set = parse_jwks({"keys": [jwk]})
    assert key_set.keys == () and "1024 bits" in key_set.rejected[0].reason
    protected = b64(json.dumps({"alg": "RS256", "kid": "weak"}))
    signature = outcome_of({"protected": protected, "signature": "AA"}, StaticKeyResolver(key_set))
    assert signature.outcome is Outcome.UNSUPPORTED and "1024 bits" in signature.detail


def test_invalid_signature_with_the_right_key(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(rich_card(1), keys["ES256"])
    entry = dict(signed["signatures"][0], signature=b64(b"\x01" * 64))
    signature = outcome_of(entry, StaticKeyResolver([keys["ES256"].public]))
    assert signature.outcome is Outcome.INVALID and signature.kid == keys["ES256"].kid and signature.form is None


def test_chain_stops_at_the_first_source_that_verifies(keys: dict[str, SigningKey]) -> None:
    consulted: list[str] = []

    class Recording:
        def __init__(self, name: str, resolver: StaticKeyResolver) -> None:
            self.name, self.resolver = name, resolver

        def resolve(self, kid: str | None, jku: str | None) -> Any:
            consulted.append(self.name)
            yield from self.resolver.resolve(kid, jku)

    key = keys["EdDSA"]
    chain = ChainResolver(
        [
            Recording("empty", StaticKeyResolver([], "empty")),
            Recording("pinned", StaticKeyResolver([key.public], "pinned")),
            Recording("never", StaticKeyResolver([key.public], "never")),
        ]
    )
    (signature,) = verify_card(sign_card(rich_card(1), key), chain).signatures
    assert signature.key_source == "pinned" and consulted == ["empty", "pinned"]


def test_signatures_with_a_non_list_container_are_a_card_format_error() -> None:
    with pytest.raises(CardFormatError):
        verify_card({"name": "x", "signatures": "AA.BB"}, StaticKeyResolver([]))


entries = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "protected": st.one_of(
                st.text(max_size=40),
                st.builds(lambda v: b64(json.dumps(v)), json_values),
                st.builds(
                    lambda v: b64(json.dumps({"alg": "ES256", **v})),
                    st.dictionaries(st.text(max_size=5), json_values, max_size=3),
                ),
            ),
            "signature": st.one_of(st.text(max_size=40), st.binary(max_size=70).map(b64)),
            "header": json_values,
        },
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=4), st.lists(entries, max_size=3))
def test_nothing_crashes_on_arbitrary_input(card: dict[str, Any], signatures: list[Any]) -> None:
    key = _key()
    result = verify_card({**card, "signatures": signatures}, StaticKeyResolver([key.public]))
    assert not result.ok
    assert all(s.outcome is not Outcome.VALID for s in result.signatures)
    assert json.dumps(result.to_dict())


_SESSION_KEY: list[SigningKey] = []


def _key() -> SigningKey:
    if not _SESSION_KEY:
        _SESSION_KEY.append(generate_key("ES256"))
    return _SESSION_KEY[0]
