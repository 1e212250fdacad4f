"""`agentdex keys generate | jwks` end to end through the real command."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from signing import load_private_key_pem, load_signing_key, thumbprint

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi"}


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "ES384", "PS256", "RS256"])
def test_generate_writes_a_private_pem_and_public_jwk(alg: str, tmp_path: Path) -> None:
    key_file, public_file = tmp_path / "key.pem", tmp_path / "key.pub.jwk.json"
    result = run("keys", "generate", "--alg", alg, "--out", str(key_file), "--public-jwk", str(public_file))
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = load_private_key_pem(key_file.read_bytes())
    public = json.loads(public_file.read_text())
    assert key.algorithm.value == alg == public["alg"]
    assert key.kid == public["kid"] == thumbprint(public) and key.kid in result.stderr
    assert not PRIVATE_MEMBERS & public.keys()


def test_generate_with_kid_jwk_format_and_overwrite_protection(tmp_path: Path) -> None:
    out = tmp_path / "key.jwk.json"
    assert (
        run(
            "keys", "generate", "--alg", "ES256", "--kid", "release-2026", "--format", "jwk", "--out", str(out)
        ).exit_code
        == 0
    )
    assert load_signing_key(out.read_bytes()).kid == "release-2026"
    again = run("keys", "generate", "--alg", "ES256", "--format", "jwk", "--out", str(out))
    assert again.exit_code == 2 and "--force" in again.stderr
    assert run("keys", "generate", "--alg", "EdDSA", "--out", str(out), "--force").exit_code == 0


def test_generate_encrypts_with_a_password_from_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "key.pem"
    result = run(
        "keys", "generate", "--alg", "EdDSA", "--out", str(out), "--password-env", "KEY_PW", env={"KEY_PW": "s3cret"}
    )
    assert result.exit_code == 0, result.output
    assert b"ENCRYPTED PRIVATE KEY" in out.read_bytes()
    assert load_private_key_pem(out.read_bytes(), b"s3cret").algorithm.value == "EdDSA"
    missing = run("keys", "generate", "--alg", "EdDSA", "--out", str(tmp_path / "k2.pem"), "--password-env", "NOPE")
    assert missing.exit_code == 2 and "NOPE" in missing.stderr


@pytest.mark.parametrize("alg", ["none", "HS256", "ES512"])
def test_generate_refuses_other_algorithms(alg: str, tmp_path: Path) -> None:
    assert run("keys", "generate", "--alg", alg, "--out", str(tmp_path / "k.pem")).exit_code == 2


def test_jwks_prints_public_keys_of_every_file(tmp_path: Path) -> None:
    files = []
    for alg in ("EdDSA", "ES256"):
        key, public = tmp_path / f"{alg}.pem", tmp_path / f"{alg}.pub.json"
        run("keys", "generate", "--alg", alg, "--out", str(key), "--public-jwk", str(public))
        files += [str(key), str(public)]
    result = run("keys", "jwks", *files)
    assert result.exit_code == 0, result.output
    jwks = json.loads(result.stdout)
    assert [jwk["alg"] for jwk in jwks["keys"]] == ["EdDSA", "ES256"]  # a key's private and public files: once
    assert all(not PRIVATE_MEMBERS & jwk.keys() for jwk in jwks["keys"])


def test_jwks_reports_unreadable_keys_as_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    for args in ([str(bad)], [str(tmp_path / "missing.pem")]):
        result = run("keys", "jwks", *args)
        assert result.exit_code == 2 and result.stderr.startswith("error: ")
