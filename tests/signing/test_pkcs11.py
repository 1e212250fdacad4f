"""Keys held in a PKCS#11 token (SoftHSM2): cards signed by the token verify with the public key
read from the token, and every failure names the URI part, never the PIN."""

from __future__ import annotations

from pathlib import Path

import pkcs11
import pytest
from cryptography.hazmat.primitives import serialization
from pkcs11 import Attribute, ObjectClass

from signing import (
    KeyFormatError,
    Outcome,
    StaticKeyResolver,
    TokenKeyError,
    open_pkcs11_key,
    private_jwk,
    sign_card,
    verify_card,
)
from tests.signing.cards import rich_card
from tests.signing.softhsm import SoftHsmToken, softhsm_token


@pytest.fixture(scope="session")
def token(tmp_path_factory: pytest.TempPathFactory) -> SoftHsmToken:
    return softhsm_token(tmp_path_factory.mktemp("softhsm"))


@pytest.mark.parametrize(
    ("key", "alg", "expected"),
    [("card-key", None, "EdDSA"), ("es-key", None, "ES256"), ("rsa-key", None, "RS256"), ("rsa-key", "PS256", "PS256")],
)
def test_a_token_key_signs_cards_the_verifier_accepts(
    token: SoftHsmToken, key: str, alg: str | None, expected: str
) -> None:
    with open_pkcs11_key(token.uri(key), alg=alg) as signing_key:
        signed = sign_card(rich_card(), signing_key)
    assert signing_key.algorithm.value == expected
    result = verify_card(signed, StaticKeyResolver([signing_key.public]))
    assert result.ok and result.signatures[0].outcome is Outcome.VALID
    assert result.signatures[0].kid == signing_key.public.thumbprint  # the default kid, as for key files


def test_the_public_key_is_the_one_the_token_holds(token: SoftHsmToken) -> None:
    with open_pkcs11_key(token.uri("card-key")) as signing_key:
        ours = signing_key.public.public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    with pkcs11.lib(token.module).get_token(token_label=token.label).open(user_pin=token.pin) as session:
        point = session.get_key(ObjectClass.PUBLIC_KEY, label="card-key")[Attribute.EC_POINT]
    assert point == b"\x04\x20" + ours  # CKA_EC_POINT: DER OCTET STRING of the 32 key bytes


def test_ed25519_signatures_from_the_token_are_byte_stable(token: SoftHsmToken) -> None:
    with open_pkcs11_key(token.uri("card-key")) as signing_key:
        first = sign_card(rich_card(), signing_key)
        assert sign_card(first, signing_key) == first


def test_a_key_is_found_by_percent_encoded_id(token: SoftHsmToken) -> None:
    uri = f"pkcs11:token={token.label};id=%02?module-path={token.module}&pin-value={token.pin}"
    with open_pkcs11_key(uri) as signing_key:
        assert signing_key.algorithm.value == "ES256"


def test_the_pin_can_come_from_an_environment_variable(token: SoftHsmToken) -> None:
    uri = token.uri("card-key", pin="pin-source=env:HSM_PIN")
    with open_pkcs11_key(uri, environ={"HSM_PIN": token.pin}) as signing_key:
        assert verify_card(sign_card(rich_card(), signing_key), StaticKeyResolver([signing_key.public])).ok


def test_the_private_half_of_a_token_key_cannot_be_exported(token: SoftHsmToken) -> None:
    with open_pkcs11_key(token.uri("card-key")) as signing_key, pytest.raises(KeyFormatError, match="held in a token"):
        private_jwk(signing_key)


def test_a_wrong_pin_names_the_key_and_not_the_pin(token: SoftHsmToken) -> None:
    with pytest.raises(TokenKeyError, match="refused the PIN") as raised:
        with open_pkcs11_key(token.uri("card-key", pin="pin-value=987654")):
            pass
    assert "object=card-key" in str(raised.value) and "987654" not in str(raised.value)


@pytest.mark.parametrize(
    ("uri", "named"),
    [
        ("pkcs11:token=agentdex;object=k;colour=red?module-path=/x.so", "'colour'"),
        ("pkcs11:token=agentdex;object=k", "module-path"),
        ("pkcs11:token=agentdex?module-path=/x.so", "object=LABEL or id="),
        ("pkcs11:token=agentdex;object=k;type=public?module-path=/x.so", "type=public"),
        ("pkcs11:object=k?module-path=/x.so&pin-source=env:NOT_SET_ANYWHERE", "NOT_SET_ANYWHERE"),
        ("pkcs11:object=k?module-path=/no/such/module.so", "module-path /no/such/module.so"),
        ("pkcs11:token=no-such-token;object=k?module-path=/usr/lib/softhsm/libsofthsm2.so", "no token matches"),
    ],
)
def test_uri_errors_name_the_part_at_fault(token: SoftHsmToken, uri: str, named: str) -> None:
    with pytest.raises(TokenKeyError, match=named.replace("?", r"\?")):
        with open_pkcs11_key(uri):
            pass


def test_a_missing_key_names_the_uri(token: SoftHsmToken) -> None:
    with pytest.raises(TokenKeyError, match="token=agentdex;object=absent: no private key"):
        with open_pkcs11_key(token.uri("absent")):
            pass


def test_a_pin_file_is_read_as_rfc_7512_says(token: SoftHsmToken, tmp_path: Path) -> None:
    (tmp_path / "pin").write_text(token.pin + "\n")
    with open_pkcs11_key(token.uri("es-key", pin=f"pin-source=file:{tmp_path / 'pin'}")) as signing_key:
        assert signing_key.algorithm.value == "ES256"
