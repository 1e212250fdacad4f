"""RFC 7515, RFC 8037 and RFC 7520 (JOSE cookbook) vectors: asymmetric signatures verify with the
package's JWS primitives, deterministic ones re-sign exactly; HMAC, `none` and `b64: false`
are refused, as they must be for Agent Cards."""

from __future__ import annotations

from typing import Any

import pytest

from signing import (
    KeyFormatError,
    MalformedSignatureError,
    UnsupportedSignatureError,
    load_public_jwk,
    signing_key,
    thumbprint,
)
from signing.jws import b64url_decode, b64url_encode, parse_header
from signing.keys import import_jwk
from tests.signing.conftest import TESTDATA, load_json

JWS = TESTDATA / "jws"
COOKBOOK = JWS / "ietf-jose-cookbook"
RFC7515 = {v["id"]: v for v in load_json(JWS / "rfc7515_appendix_a.json")["vectors"]}
RFC8037 = load_json(JWS / "rfc8037_appendix_a.json")


def verifies(protected: str, payload_b64: str, signature: str, jwk: dict[str, Any], unprotected: Any = None) -> bool:
    header = parse_header(protected, unprotected)
    key = load_public_jwk(jwk)
    assert header.alg in key.algorithms
    raw = b64url_decode(signature, limit=4096, what="signature")
    return key.verify(header.alg, raw, f"{protected}.{payload_b64}".encode())


def resign(jwk: dict[str, Any], alg: str, signing_input: str) -> str:
    return b64url_encode(signing_key(import_jwk(jwk), alg=alg).sign(signing_input.encode()))


@pytest.mark.parametrize("vector_id", ["RFC7515-A.2", "RFC7515-A.3", "RFC7515-A.4"])
def test_rfc7515_asymmetric_vectors_verify(vector_id: str) -> None:
    v = RFC7515[vector_id]
    assert verifies(v["protected_b64u"], v["payload_b64u"], v["signature_b64u"], v["jwk"])
    tampered = v["payload_b64u"][:-2] + ("A" if v["payload_b64u"][-2] != "A" else "B") + v["payload_b64u"][-1]
    assert not verifies(v["protected_b64u"], tampered, v["signature_b64u"], v["jwk"])


def test_rfc7515_a2_rs256_resigns_exactly() -> None:
    v = RFC7515["RFC7515-A.2"]
    assert resign(v["jwk"], "RS256", v["signing_input"]) == v["signature_b64u"]


def test_rfc7515_hmac_and_none_are_refused() -> None:
    with pytest.raises(UnsupportedSignatureError, match="HMAC"):
        parse_header(RFC7515["RFC7515-A.1"]["protected_b64u"])
    with pytest.raises(UnsupportedSignatureError, match="none"):
        parse_header(RFC7515["RFC7515-A.5"]["protected_b64u"])
    with pytest.raises(KeyFormatError, match="symmetric"):
        load_public_jwk(RFC7515["RFC7515-A.1"]["jwk"])


@pytest.mark.parametrize("section", ["A.6_general_json_serialization", "A.7_flattened_json_serialization"])
def test_rfc7515_json_serializations_verify_with_unprotected_kid(section: str) -> None:
    document = load_json(JWS / "rfc7515_appendix_a.json")[section]["value"]
    keys_by_kid = {
        "2010-12-29": RFC7515["RFC7515-A.2"]["jwk"],
        "e9bc097a-ce51-4036-9562-d2ade882db0d": RFC7515["RFC7515-A.3"]["jwk"],
    }
    signatures = document.get("signatures") or [document]
    for entry in signatures:
        header = parse_header(entry["protected"], entry["header"])
        assert verifies(
            entry["protected"], document["payload"], entry["signature"], keys_by_kid[header.kid], entry["header"]
        )


def test_rfc8037_ed25519_verifies_resigns_and_thumbprints() -> None:
    signing = RFC8037["A.4_signing"]
    assert verifies(
        signing["protected_b64u"], signing["payload_b64u"], signing["signature_b64u"], RFC8037["A.2_public_key_jwk"]
    )
    assert resign(RFC8037["A.1_private_key_jwk"], "EdDSA", signing["signing_input"]) == signing["signature_b64u"]
    assert thumbprint(RFC8037["A.2_public_key_jwk"]) == RFC8037["A.3_thumbprint"]["thumbprint_b64u"]
    assert thumbprint(RFC8037["A.1_private_key_jwk"]) == RFC8037["A.3_thumbprint"]["thumbprint_b64u"]


@pytest.mark.parametrize(
    "name", ["4_1.rsa_v15_signature", "4_2.rsa-pss_signature", "4_3.ecdsa_signature", "../curve25519/jws"]
)
def test_cookbook_asymmetric_signatures(name: str) -> None:
    vector = load_json(COOKBOOK / "jws" / f"{name}.json")
    signing, key = vector["signing"], vector["input"]["key"]
    payload_b64 = signing["sig-input"].split(".", 1)[1]
    assert verifies(signing["protected_b64u"], payload_b64, signing["sig"], key)
    compact = vector["output"]["compact"].split(".")
    assert verifies(compact[0], compact[1], compact[2], key)
    if vector.get("reproducible"):
        assert resign(key, vector["input"]["alg"], signing["sig-input"]) == signing["sig"]


def test_cookbook_multiple_signatures_verify_and_hmac_is_refused() -> None:
    vector = load_json(COOKBOOK / "jws" / "4_8.multiple_signatures.json")
    payload_b64 = vector["output"]["json"]["payload"]
    rsa, ec, _oct = vector["input"]["key"]
    first, second, third = vector["output"]["json"]["signatures"]
    assert verifies(first["protected"], payload_b64, first["signature"], rsa, first["header"])
    # The second signature has no protected header at all: alg only unprotected is refused here.
    with pytest.raises(MalformedSignatureError):
        parse_header(second.get("protected", ""), second["header"])
    protected_es512 = b64url_encode(b'{"alg":"ES512"}')
    assert not verifies(protected_es512, payload_b64, second["signature"], ec)  # header is part of the input
    with pytest.raises(UnsupportedSignatureError):
        parse_header(third["protected"], third.get("header"))


@pytest.mark.parametrize(
    "name",
    [
        "4_4.hmac-sha2_integrity_protection",
        "4_5.signature_with_detached_content",
        "4_6.protecting_specific_header_fields",
    ],
)
def test_cookbook_hmac_vectors_are_refused(name: str) -> None:
    vector = load_json(COOKBOOK / "jws" / f"{name}.json")
    with pytest.raises(UnsupportedSignatureError, match="HMAC"):
        parse_header(vector["signing"]["protected_b64u"])
    with pytest.raises(KeyFormatError):
        load_public_jwk(vector["input"]["key"])


@pytest.mark.parametrize("name", ["4.2.hmac-sha2_b64_false", "hmac-sha2_b64_false"])
def test_unencoded_payload_vectors_are_refused(name: str) -> None:
    vector = load_json(COOKBOOK / "rfc7797" / f"{name}.json")
    with pytest.raises((UnsupportedSignatureError, MalformedSignatureError)):
        parse_header(vector["signing"]["protected_b64u"])


def test_b64_false_and_crit_are_refused_even_with_an_asymmetric_alg() -> None:
    for header in (
        b'{"alg":"ES256","b64":false,"crit":["b64"]}',
        b'{"alg":"ES256","crit":["exp"]}',
        b'{"alg":"ES256","b64":false}',
    ):
        with pytest.raises(UnsupportedSignatureError):
            parse_header(b64url_encode(header))


@pytest.mark.parametrize(
    "name", ["3_1.ec_public_key", "3_2.ec_private_key", "3_3.rsa_public_key", "3_4.rsa_private_key"]
)
def test_cookbook_keys_load(name: str) -> None:
    jwk = load_json(COOKBOOK / "jwk" / f"{name}.json")
    key = load_public_jwk(jwk)
    assert key.kid == "bilbo.baggins@hobbiton.example"
    assert key.algorithms


@pytest.mark.parametrize("name", ["3_5.symmetric_key_mac_computation", "3_6.symmetric_key_encryption"])
def test_cookbook_symmetric_keys_are_refused(name: str) -> None:
    with pytest.raises(KeyFormatError, match="symmetric"):
        load_public_jwk(load_json(COOKBOOK / "jwk" / f"{name}.json"))
