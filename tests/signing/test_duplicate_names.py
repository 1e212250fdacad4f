"""A repeated member name means one thing to `json` (the last value) and another to readers that
keep the first: cards, JWS protected headers (RFC 7515 §5.2), JWKs and JWK Sets that repeat a
name are refused wherever `signing` reads them, naming the member and its path."""

from __future__ import annotations

import json

import pytest

from signing import (
    DuplicateMemberError,
    JwksUrlResolver,
    KeyFormatError,
    Outcome,
    SigningKey,
    StaticKeyResolver,
    load_verification_keys,
    loads_json,
    parse_jwks,
    public_jwk,
    public_jwks,
    sign_card,
    verify_card,
)
from signing.jws import b64url_encode
from tests.signing.cards import rich_card


def with_name_first(signed: dict, name: str) -> str:
    """The signed card's text with a second "name" member placed before the real one."""
    return '{"name": ' + json.dumps(name) + ", " + json.dumps(signed)[1:]


def test_a_signed_card_with_a_second_name_before_the_real_one_is_refused(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(rich_card(1), keys["EdDSA"])
    text = with_name_first(signed, "Totally Legit Bank")
    # What made it dangerous: `json` keeps the last name, so the signature verifies...
    assert verify_card(json.loads(text), StaticKeyResolver([keys["EdDSA"].public])).ok
    # ...while a reader that keeps the first name shows another agent.
    with pytest.raises(DuplicateMemberError) as refused:
        loads_json(text)
    assert refused.value.path == "$.name" and '"name"' in str(refused.value)


def test_a_protected_header_that_repeats_kid_is_malformed(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(rich_card(1), keys["ES256"])
    real = json.dumps({"alg": "ES256", "kid": keys["ES256"].kid})
    header = '{"kid": "attacker", ' + real[1:]
    entry = {**signed["signatures"][0], "protected": b64url_encode(header.encode())}
    result = verify_card({**signed, "signatures": [entry]}, StaticKeyResolver([keys["ES256"].public]))
    (signature,) = result.signatures
    assert not result.ok and signature.outcome is Outcome.MALFORMED
    assert "repeats the member name 'kid' at $.kid" in signature.detail and "RFC 7515 §5.2" in signature.detail


def jwks_with_repeated_x(key: SigningKey) -> bytes:
    jwk = public_jwk(key.public)
    text = json.dumps({"keys": [jwk]})
    return text.replace('"x": ', '"x": "AAAA", "x": ', 1).encode()


def test_a_jwks_document_that_repeats_a_member_is_refused(keys: dict[str, SigningKey]) -> None:
    document = jwks_with_repeated_x(keys["EdDSA"])
    with pytest.raises(KeyFormatError, match=r'"x" appears more than once at \$\.keys\[0\]\.x'):
        parse_jwks(document)
    with pytest.raises(KeyFormatError, match=r"\$\.keys"):
        StaticKeyResolver.from_jwks(
            b'{"keys": [], "keys": ' + json.dumps(public_jwks([keys["EdDSA"]])["keys"]).encode() + b"}"
        )


def test_a_key_file_that_repeats_a_member_is_refused(keys: dict[str, SigningKey]) -> None:
    jwk = json.dumps(public_jwk(keys["ES256"].public))
    with pytest.raises(KeyFormatError, match=r"key file is refused: .*\$\.kid"):
        load_verification_keys(('{"kid": "other", ' + jwk[1:]).encode())


def test_a_fetched_jwks_that_repeats_a_member_gives_no_keys_and_says_why(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(rich_card(1), keys["EdDSA"])
    resolver = JwksUrlResolver(
        ["https://keys.example/jwks.json"], fetcher=lambda url: jwks_with_repeated_x(keys["EdDSA"])
    )
    (signature,) = verify_card(signed, resolver).signatures
    assert signature.outcome is Outcome.KEY_NOT_FOUND
    assert '"x" appears more than once at $.keys[0].x' in signature.detail
