"""`agentdex keys generate | jwks`: signing keys for Agent Cards.

Exit codes (cli.exits): 0 ok, 2 usage (bad algorithm, unreadable or invalid key, file exists).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING

import click

from cli.card_signing import password_from, signing_errors, write_stdout
from cli.exits import CliError, ExitCode, reports_errors
from cli.files import STDIO
from cli.key_sources import load_public_keys
from cli.keys import keys

if TYPE_CHECKING:
    from signing import VerificationKey

ALGORITHMS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


@keys.command("generate")
@click.option(
    "--alg",
    required=True,
    type=click.Choice(ALGORITHMS),
    help="EdDSA (Ed25519), ES256 (P-256), ES384 (P-384), PS256 or RS256 (RSA-3072).",
)
@click.option("--kid", help="Key id (default: the RFC 7638 thumbprint of the public key).")
@click.option("--out", required=True, help="Private key file (`-` for standard output).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["pem", "jwk"]),
    default="pem",
    show_default=True,
    help="pem: PKCS#8 PEM with kid/alg lines; jwk: private JWK (JSON).",
)
@click.option("--public-jwk", "public_out", help="Also write the public JWK to this file.")
@click.option("--password-env", metavar="VAR", help="Encrypt the PEM with the password in this environment variable.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
@reports_errors
def generate(
    alg: str, kid: str | None, out: str, fmt: str, public_out: str | None, password_env: str | None, force: bool
) -> None:
    """Generate a signing key for `agentdex card sign`; the private file is written mode 0600.

    \f
    Raises CliError (exit 2) when a file exists (without --force) or cannot be written.
    """
    from signing import generate_key, public_jwk, save_private_jwk, save_private_key_pem

    password = password_from(password_env)
    if password and fmt == "jwk":
        raise CliError("--password-env encrypts PEM files only; use --format pem", ExitCode.USAGE)
    with signing_errors():
        key = generate_key(alg, kid=kid)
    private = save_private_key_pem(key, password) if fmt == "pem" else save_private_jwk(key)
    _write(out, private, force=force, secret=True)
    if public_out:
        _write(public_out, (json.dumps(public_jwk(key), indent=2) + "\n").encode(), force=force, secret=False)
    click.echo(f"generated {alg} key {key.kid}", err=True)


def _write(path: str, data: bytes, *, force: bool, secret: bool) -> None:
    if path == STDIO:
        write_stdout(data)
        return
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    try:
        descriptor = os.open(path, flags, 0o600 if secret else 0o644)
    except FileExistsError:
        raise CliError(f"{path} exists; pass --force to overwrite it", ExitCode.USAGE) from None
    except OSError as error:
        raise CliError(f"cannot write {path}: {error.strerror or error}", ExitCode.USAGE) from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


@keys.command("jwks")
@click.argument("key_sources", metavar="KEY [KEY ...]", nargs=-1, required=True)
@click.option("--password-env", metavar="VAR", help="Password for encrypted private PEMs.")
@reports_errors
def jwks(key_sources: tuple[str, ...], password_env: str | None) -> None:
    """Print the public JWKS of each KEY (private keys give their public half).

    A KEY is a PEM, JWK or JWKS file; `-` (standard input); env:VAR (the key text in an
    environment variable); or a pkcs11: URI (RFC 7512), whose public key is read from the token.
    Publish the JWKS where verifiers fetch it, or give it to `agentdex card verify --jwks`.

    \f
    Raises CliError (exit 2) when a KEY cannot be read as a key.
    """
    from signing import public_jwks

    password = password_from(password_env)
    collected: list[VerificationKey] = []
    for source in key_sources:
        with signing_errors(), contextlib.ExitStack() as token_session:
            key_set = load_public_keys(source, password, token_session)
        for rejected in key_set.rejected:
            click.echo(f"warning: {source}: {rejected.reason}", err=True)
        collected.extend(key_set.keys)
    unique = {(key.kid, key.thumbprint): key for key in collected}  # a private and public file of one key
    click.echo(json.dumps(public_jwks(unique.values()), indent=2))
