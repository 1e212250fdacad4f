"""Keys: generation per algorithm, PEM (optionally encrypted) and JWK round trips, RFC 7638
thumbprints as default kid, public JWKS without private members, and refusal of weak keys."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from signing import (
    Algorithm,
    KeyFormatError,
    KeyType,
    SigningKey,
    UnsupportedAlgorithmError,
    WeakKeyError,
    generate_key,
    load_private_jwk,
    load_private_key_pem,
    load_public_jwk,
    load_public_key_pem,
    load_signing_key,
    load_verification_keys,
    private_jwk,
    public_jwk,
    public_jwks,
    save_private_jwk,
    save_private_key_pem,
    signing_key,
    thumbprint,
)
from tests.signing.conftest import CARD_ALGS

KEY_TYPES = {
    "EdDSA": KeyType.ED25519,
    "ES256": KeyType.P256,
    "ES384": KeyType.P384,
    "PS256": KeyType.RSA,
    "RS256": KeyType.RSA,
}
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi"}


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_generated_keys_have_the_right_type_alg_and_thumbprint_kid(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    assert key.key_type is KEY_TYPES[alg] and key.algorithm == Algorithm(alg)
    assert key.kid == thumbprint(public_jwk(key)) == key.public.thumbprint
    if key.key_type is KeyType.RSA:
        assert key.private_key.key_size == 3072


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_pem_round_trip_keeps_kid_and_alg(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    for password in (None, b"correct horse"):
        pem = save_private_key_pem(key, password)
        assert (b"ENCRYPTED" in pem) is bool(password)
        loaded = load_private_key_pem(pem, password)
        assert (loaded.kid, loaded.algorithm, public_jwk(loaded)) == (key.kid, key.algorithm, public_jwk(key))


@pytest.mark.parametrize("alg", CARD_ALGS)
def test_jwk_round_trip(alg: str, keys: dict[str, SigningKey]) -> None:
    key = keys[alg]
    loaded = load_private_jwk(private_jwk(key))
    assert (loaded.kid, loaded.algorithm) == (key.kid, key.algorithm)
    public = load_public_jwk(public_jwk(key))
    assert public.kid == key.kid and public.algorithms == frozenset({key.algorithm})
    assert load_signing_key(save_private_jwk(key)).kid == key.kid


def test_wrong_or_missing_password_is_an_actionable_key_format_error(keys: dict[str, SigningKey]) -> None:
    pem = save_private_key_pem(keys["EdDSA"], b"secret")
    with pytest.raises(KeyFormatError, match="wrong password"):
        load_private_key_pem(pem, b"nope")
    with pytest.raises(KeyFormatError, match="password"):
        load_private_key_pem(pem)


def test_pem_without_metadata_gets_thumbprint_kid_and_default_alg() -> None:
    private = ec.generate_private_key(ec.SECP384R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    key = load_private_key_pem(pem)
    assert key.algorithm is Algorithm.ES384 and key.kid == key.public.thumbprint
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    public = load_public_key_pem(public_pem)
    assert public.kid is None and public.algorithms == frozenset({Algorithm.ES384})


def test_rsa_keys_default_to_rs256_and_may_choose_ps256(keys: dict[str, SigningKey]) -> None:
    assert signing_key(keys["PS256"].private_key).algorithm is Algorithm.RS256
    assert signing_key(keys["RS256"].private_key, alg="PS256").algorithm is Algorithm.PS256
    with pytest.raises(UnsupportedAlgorithmError):
        signing_key(keys["RS256"].private_key, alg="ES256")


@pytest.mark.filterwarnings("ignore:Key size should be:UserWarning")
def test_rsa_below_2048_bits_is_refused_for_signing() -> None:
    with pytest.raises(WeakKeyError, match="2048"):
        signing_key(rsa.generate_private_key(public_exponent=65537, key_size=1024))


@pytest.mark.parametrize("alg", ["none", "HS256", "ES512", "RS384", "nonsense"])
def test_only_card_algorithms_are_generated(alg: str) -> None:
    with pytest.raises(UnsupportedAlgorithmError):
        generate_key(alg)


def test_public_jwks_has_no_private_members(keys: dict[str, SigningKey]) -> None:
    jwks = public_jwks(keys.values())
    assert [jwk["kid"] for jwk in jwks["keys"]] == [key.kid for key in keys.values()]
    assert all(not PRIVATE_MEMBERS & jwk.keys() and jwk["use"] == "sig" for jwk in jwks["keys"])


@pytest.mark.parametrize(
    "jwk,needle",
    [
        ({"kty": "oct", "k": "AAAA"}, "symmetric"),
        ({"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"}, "invalid EC JWK"),
        ({"kty": "OKP", "crv": "X25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}, "cannot sign JWS"),
        ({"kty": "RSA"}, "invalid RSA JWK"),
        ({"kty": "dragon"}, "unsupported JWK kty"),
        ({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "use": "enc"}, "use"),
        (
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "key_ops": ["sign"]},
            "key_ops",
        ),
    ],
)
def test_unusable_jwks_are_refused(jwk: dict, needle: str) -> None:
    with pytest.raises(KeyFormatError, match=needle):
        load_public_jwk(jwk)


def test_jwk_alg_must_fit_the_key() -> None:
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "alg": "ES256"}
    with pytest.raises(UnsupportedAlgorithmError, match="needs a P-256 key"):
        load_public_jwk(jwk)


def test_verification_keys_from_any_key_file(keys: dict[str, SigningKey]) -> None:
    key = keys["ES256"]
    public_pem = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for data in (
        save_private_key_pem(key),
        public_pem,
        json.dumps(public_jwk(key)).encode(),
        json.dumps(public_jwks([key])).encode(),
    ):
        (loaded,) = load_verification_keys(data).keys
        assert loaded.thumbprint == key.public.thumbprint
    for garbage in (b"", b"not a key", b"[1,2]", b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"):
        with pytest.raises(KeyFormatError):
            load_verification_keys(garbage)
