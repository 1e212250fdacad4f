"""`agentdex card canonicalize | sign | verify` end to end: files, stdin/stdout, exit codes for
pipelines, JWKS served on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from signing import canonicalize, generate_key, public_jwks, save_private_key_pem
from tests.signing.cards import hybrid, rich_card
from tests.support.servers import CardServer

SHARED_CARDS = Path(__file__).resolve().parents[2].parent / "shared" / "testdata" / "cards"


def run(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, env=env, catch_exceptions=False)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "card.json").write_text(json.dumps(hybrid(rich_card())), encoding="utf-8")
    assert (
        run(
            "keys",
            "generate",
            "--alg",
            "ES256",
            "--out",
            str(tmp_path / "key.pem"),
            "--public-jwk",
            str(tmp_path / "key.pub.json"),
        ).exit_code
        == 0
    )
    return tmp_path


def sign(workdir: Path, *extra: str) -> Path:
    out = workdir / "signed.json"
    result = run(
        "card", "sign", str(workdir / "card.json"), "--key", str(workdir / "key.pem"), "--out", str(out), *extra
    )
    assert result.exit_code == 0, result.output
    return out


def test_sign_then_verify(workdir: Path) -> None:
    signed = sign(workdir, "--jku", "https://meteo.example.com/.well-known/jwks.json")
    result = run("card", "sign", str(workdir / "card.json"), "--key", str(workdir / "key.pem"), "--out", str(signed))
    assert "does not cover /url" in result.stderr  # the 0.3 compatibility fields are named
    verified = run("card", "verify", str(signed), "--key", str(workdir / "key.pub.json"))
    assert verified.exit_code == 0, verified.output
    assert "verified" in verified.stdout and "form=sdk" in verified.stdout and "not covered: /url" in verified.stdout


def test_verify_json_output(workdir: Path) -> None:
    signed = sign(workdir)
    result = run("card", "verify", str(signed), "--jwks", str(workdir / "key.pub.json"), "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    (signature,) = report["signatures"]
    assert report["ok"] is True and signature["outcome"] == "valid" and signature["alg"] == "ES256"
    assert signature["form"] == "sdk" and signature["key_source"].startswith("jwks:")
    assert "/preferredTransport" in signature["uncovered"]


def test_tampered_card_exits_1(workdir: Path) -> None:
    signed = sign(workdir)
    card = json.loads(signed.read_text())
    card["skills"][0]["description"] += "!"
    signed.write_text(json.dumps(card))
    result = run("card", "verify", str(signed), "--key", str(workdir / "key.pub.json"))
    assert result.exit_code == 1 and "invalid" in result.stdout


def test_unresolved_keys_exit_3(workdir: Path) -> None:
    signed = sign(workdir)
    result = run("card", "verify", str(signed))
    assert result.exit_code == 3 and "key_not_found" in result.stdout and "hint" in result.stderr
    spec_sample = run("card", "verify", str(SHARED_CARDS / "a2a-spec__6.json"), "--key", str(workdir / "key.pub.json"))
    assert spec_sample.exit_code == 3 and "kid=key-1" in spec_sample.stdout


def test_policies_and_required_kid(workdir: Path) -> None:
    signed = sign(workdir)
    other = generate_key("EdDSA")
    other_pem = workdir / "other.pem"
    other_pem.write_bytes(save_private_key_pem(other))
    rotated = workdir / "rotated.json"
    assert run("card", "sign", str(signed), "--key", str(other_pem), "--out", str(rotated)).exit_code == 0
    key = str(workdir / "key.pub.json")
    assert run("card", "verify", str(rotated), "--key", key).exit_code == 0
    assert run("card", "verify", str(rotated), "--key", key, "--policy", "all").exit_code == 3
    assert run("card", "verify", str(rotated), "--key", key, "--key", str(other_pem), "--policy", "all").exit_code == 0
    missing = run("card", "verify", str(signed), "--key", key, "--require-kid", other.kid)
    assert missing.exit_code == 1 and other.kid in missing.stdout


def test_unsigned_card_exits_1(workdir: Path) -> None:
    result = run("card", "verify", str(workdir / "card.json"), "--key", str(workdir / "key.pub.json"))
    assert result.exit_code == 1 and "no signatures" in result.stdout


def test_stdin_and_stdout(workdir: Path) -> None:
    card = (workdir / "card.json").read_bytes()
    signed = run("card", "sign", "-", "--key", str(workdir / "key.pem"), stdin=card)
    assert signed.exit_code == 0
    verified = run("card", "verify", "-", "--key", str(workdir / "key.pub.json"), stdin=signed.stdout_bytes)
    assert verified.exit_code == 0 and verified.stdout.startswith("standard input: verified")


@pytest.mark.parametrize("form", ["sdk", "strict", "plain"])
def test_canonicalize_prints_the_exact_payload(workdir: Path, form: str) -> None:
    result = run("card", "canonicalize", str(workdir / "card.json"), "--form", form)
    assert result.exit_code == 0
    assert result.stdout_bytes == canonicalize(json.loads((workdir / "card.json").read_text()), form)


def test_canonicalize_reproduces_the_spec_example() -> None:
    result = run("card", "canonicalize", str(SHARED_CARDS / "a2a-spec__8.json"), "--form", "strict")
    assert result.stdout_bytes == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},'
        b'"description":"","name":"Example Agent","skills":[]}'
    )


def test_encrypted_keys_take_the_password_from_the_environment(workdir: Path) -> None:
    key = workdir / "enc.pem"
    assert (
        run("keys", "generate", "--alg", "EdDSA", "--out", str(key), "--password-env", "PW", env={"PW": "pw"}).exit_code
        == 0
    )
    card = str(workdir / "card.json")
    assert run("card", "sign", card, "--key", str(key)).exit_code == 2
    assert run("card", "sign", card, "--key", str(key), "--password-env", "PW", env={"PW": "pw"}).exit_code == 0


@pytest.mark.parametrize(
    "args,stdin,code",
    [
        (["card", "verify", "missing.json"], None, 2),
        (["card", "canonicalize", "-"], b"{not json", 2),
        (["card", "canonicalize", "-"], b"[1, 2]", 1),
        (["card", "canonicalize", "-"], b'{"name": NaN}', 2),  # NaN is not JSON: a bad input file
        (["card", "sign", "-", "--key", "missing.pem"], b"{}", 2),
        (["card", "verify", "-", "--jwks", "http://127.0.0.1:9/jwks.json"], b"{}", 2),
        (["card", "verify", "-", "--allow-origin", "https://a.example/path"], b"{}", 2),
    ],
)
def test_usage_and_input_errors(
    workdir: Path, args: list[str], stdin: bytes | None, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workdir)
    result = run(*args, stdin=stdin)
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: ")


def test_jwks_url_and_jku_on_loopback(workdir: Path, card_server: CardServer) -> None:
    jwks: Any = json.loads(run("keys", "jwks", str(workdir / "key.pem")).stdout)
    url = card_server.serve_json("/.well-known/jwks.json", jwks)
    signed = sign(workdir, "--jku", url)
    unsafe = "--unsafe-allow-http-loopback"
    assert run("card", "verify", str(signed), "--jwks", url, unsafe).exit_code == 0
    assert run("card", "verify", str(signed), "--allow-origin", card_server.base_url, unsafe).exit_code == 0
    assert run("card", "verify", str(signed), "--allow-origin", "https://elsewhere.example").exit_code == 3
    dead = card_server.url("/gone.json")
    result = run("card", "verify", str(signed), "--jwks", dead, unsafe)
    assert result.exit_code == 3 and "HTTP 404" in result.stdout
    assert public_jwks([]) == {"keys": []}
