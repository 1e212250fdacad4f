"""`agentdex card sign --key` and `keys jwks` with keys that are not files, as CI hands them
over: an environment variable, standard input, a PKCS#11 token (SoftHSM2). Errors name the
variable, never the key; re-signing gives the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from signing import generate_key, public_jwks, save_private_jwk, save_private_key_pem
from tests.signing.cards import rich_card
from tests.signing.softhsm import SoftHsmToken, softhsm_token


def run(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, env=env, catch_exceptions=False)


@pytest.fixture(scope="session")
def token(tmp_path_factory: pytest.TempPathFactory) -> SoftHsmToken:
    return softhsm_token(tmp_path_factory.mktemp("softhsm"))


@pytest.fixture
def card(tmp_path: Path) -> Path:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(rich_card()), encoding="utf-8")
    return path


def signed_with(
    card: Path, key: str, *extra: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    result = run("card", "sign", str(card), "--key", key, *extra, stdin=stdin, env=env)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def verified(signed: bytes, jwks: dict, tmp_path: Path) -> bool:
    (tmp_path / "signed.json").write_bytes(signed)
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    return run("card", "verify", str(tmp_path / "signed.json"), "--jwks", str(tmp_path / "jwks.json")).exit_code == 0


@pytest.mark.parametrize("encoding", ["pem", "jwk"])
def test_a_key_in_an_environment_variable_signs(card: Path, tmp_path: Path, encoding: str) -> None:
    key = generate_key("EdDSA")
    text = (save_private_key_pem(key) if encoding == "pem" else save_private_jwk(key)).decode()
    signed = signed_with(card, "env:CARD_SIGNING_KEY", env={"CARD_SIGNING_KEY": text})
    assert verified(signed, public_jwks([key]), tmp_path)


def test_a_key_on_standard_input_signs(card: Path, tmp_path: Path) -> None:
    key = generate_key("ES256")
    signed = signed_with(card, "-", stdin=save_private_key_pem(key))
    assert verified(signed, public_jwks([key]), tmp_path)


def test_an_unset_or_empty_variable_is_named(card: Path) -> None:
    unset = run("card", "sign", str(card), "--key", "env:NO_SUCH_KEY_VAR", env={"NO_SUCH_KEY_VAR": None})  # type: ignore[dict-item]
    empty = run("card", "sign", str(card), "--key", "env:EMPTY_KEY", env={"EMPTY_KEY": " "})
    assert unset.exit_code == 2 and "environment variable NO_SUCH_KEY_VAR" in unset.output
    assert empty.exit_code == 2 and "environment variable EMPTY_KEY" in empty.output and "empty" in empty.output


def _bad_keys() -> list[str]:
    pem = save_private_key_pem(generate_key("EdDSA")).decode()
    jwk = json.loads(save_private_jwk(generate_key("ES256")))
    return [
        pem[: len(pem) // 2],  # a truncated PEM
        pem.replace("PRIVATE KEY", "PUBLIC KEY"),
        json.dumps({**jwk, "d": jwk["d"][:-6]}),  # a JWK whose private part is cut short
        json.dumps({**jwk, "crv": "P-256", "x": jwk["d"]}),
        "sk_live_" + "9f8e7d6c5b4a" * 4,  # a token pasted into the wrong secret
    ]


@pytest.mark.parametrize("text", _bad_keys())
def test_a_bad_key_in_a_variable_is_named_and_never_printed(card: Path, text: str) -> None:
    result = run("card", "sign", str(card), "--key", "env:CARD_SIGNING_KEY", env={"CARD_SIGNING_KEY": text})
    assert result.exit_code == 2
    assert "environment variable CARD_SIGNING_KEY" in result.output
    secret_lines = [line for line in text.splitlines() if len(line) >= 8 and "-----" not in line]
    for piece in [*secret_lines, *(text[i : i + 12] for i in range(0, len(text) - 12, 4))]:
        assert piece not in result.output


def test_the_key_and_the_card_cannot_both_be_standard_input() -> None:
    result = run("card", "sign", "-", "--key", "-", stdin=b"{}")
    assert result.exit_code == 2 and "standard input" in result.output


def test_a_token_key_signs_and_its_jwks_comes_from_the_token(card: Path, tmp_path: Path, token: SoftHsmToken) -> None:
    uri = token.uri("card-key", pin="pin-source=env:HSM_PIN")
    signed = signed_with(card, uri, env={"HSM_PIN": token.pin})
    jwks = run("keys", "jwks", uri, env={"HSM_PIN": token.pin})
    assert jwks.exit_code == 0, jwks.output
    assert verified(signed, json.loads(jwks.stdout), tmp_path)
    assert signed_with(card, uri, env={"HSM_PIN": token.pin}) == signed  # Ed25519 in the token is deterministic


def test_a_wrong_token_pin_fails_without_printing_it(card: Path, token: SoftHsmToken) -> None:
    result = run("card", "sign", str(card), "--key", token.uri("card-key", pin="pin-value=424242"))
    assert result.exit_code == 2 and "refused the PIN" in result.output and "424242" not in result.output


def test_keys_jwks_reads_a_variable_too() -> None:
    key = generate_key("EdDSA")
    result = run("keys", "jwks", "env:CARD_SIGNING_KEY", env={"CARD_SIGNING_KEY": save_private_jwk(key).decode()})
    assert result.exit_code == 0 and json.loads(result.stdout) == public_jwks([key])


def test_signing_again_gives_identical_bytes_and_one_signature(card: Path, tmp_path: Path) -> None:
    env = {"CARD_SIGNING_KEY": save_private_key_pem(generate_key("EdDSA")).decode()}
    once = signed_with(card, "env:CARD_SIGNING_KEY", env=env)
    (tmp_path / "once.json").write_bytes(once)
    twice = signed_with(tmp_path / "once.json", "env:CARD_SIGNING_KEY", env=env)
    assert twice == once and len(json.loads(twice)["signatures"]) == 1


def test_another_key_or_append_gives_two_signatures(card: Path, tmp_path: Path) -> None:
    env = {
        "FIRST": save_private_key_pem(generate_key("EdDSA")).decode(),
        "SECOND": save_private_key_pem(generate_key("EdDSA")).decode(),
    }
    (tmp_path / "once.json").write_bytes(signed_with(card, "env:FIRST", env=env))
    rotated = signed_with(tmp_path / "once.json", "env:SECOND", env=env)
    appended = signed_with(tmp_path / "once.json", "env:FIRST", "--append", env=env)
    assert len(json.loads(rotated)["signatures"]) == 2
    assert len(json.loads(appended)["signatures"]) == 2


@pytest.mark.parametrize("encoding", ["pem", "jwk"])
def test_verify_takes_its_key_from_an_environment_variable(card: Path, tmp_path: Path, encoding: str) -> None:
    key = generate_key("EdDSA")
    text = (save_private_key_pem(key) if encoding == "pem" else save_private_jwk(key)).decode()
    signed = tmp_path / "signed.json"
    signed.write_bytes(signed_with(card, "env:K", env={"K": text}))
    result = run("card", "verify", str(signed), "--key", "env:K", env={"K": text})
    assert result.exit_code == 0, result.output  # the private key in the variable verifies with its public half


def test_verify_with_another_key_from_an_environment_variable_fails(card: Path, tmp_path: Path) -> None:
    signed = tmp_path / "signed.json"
    signed.write_bytes(
        signed_with(card, "env:K", "--kid", "release", env={"K": save_private_key_pem(generate_key()).decode()})
    )
    impostor = json.loads(save_private_jwk(generate_key("EdDSA")))
    wrong = run("card", "verify", str(signed), "--key", "env:K", env={"K": json.dumps({**impostor, "kid": "release"})})
    assert wrong.exit_code == 1 and "NOT VERIFIED" in wrong.output  # same kid, another key: the signature is invalid
    stranger = save_private_key_pem(generate_key("EdDSA")).decode()
    unknown = run("card", "verify", str(signed), "--key", "env:K", env={"K": stranger})
    assert unknown.exit_code == 3, unknown.output  # another kid: no key for the signature, as with key files


def test_verify_names_an_unset_key_variable(card: Path) -> None:
    result = run("card", "verify", str(card), "--key", "env:NO_SUCH_KEY_VAR", env={"NO_SUCH_KEY_VAR": None})  # type: ignore[dict-item]
    assert result.exit_code == 2 and "environment variable NO_SUCH_KEY_VAR" in result.output
