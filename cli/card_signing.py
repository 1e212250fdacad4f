"""`agentdex card canonicalize | sign | verify`: offline Agent Card signing for release pipelines.

Exit codes (cli.exits): 0 ok; 1 the card cannot be signed/verified, or a signature is invalid or
missing; 2 usage (unreadable file, not JSON, bad key or option); 3 no key could be resolved.
Nothing touches the network unless a JWKS URL is given (`--jwks URL`, or `--allow-origin` for
a signature's `jku`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cli.card import card
from cli.ci_report import CI_FORMATS, Case, CheckedFile, Finding, Severity, chosen_format, format_option, render
from cli.exits import CliError, ExitCode, exit_code_for, reports_errors
from cli.files import STDIO, parse_json, read_bytes
from cli.key_sources import SOURCES_HELP, load_private_key, load_public_keys

if TYPE_CHECKING:
    from signing import KeyResolver, VerificationResult

FORMS = ("sdk", "strict", "plain")


@contextlib.contextmanager
def signing_errors() -> Iterator[None]:
    """Turn `signing` errors into CliError with the exit code `cli.exits` assigns them."""
    from signing import SigningError

    try:
        yield
    except SigningError as error:
        raise CliError(str(error), exit_code_for(error) or ExitCode.FAILED) from error


def write_stdout(data: bytes) -> None:
    """Write bytes to standard output exactly (no newline, no encoding)."""
    with click.open_file(STDIO, "wb") as stream:
        stream.write(data)


def password_from(env_name: str | None) -> bytes | None:
    """The key password held in environment variable `env_name` (never on the command line)."""
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if value is None:
        raise CliError(f"environment variable {env_name} (--password-env) is not set", ExitCode.USAGE)
    return value.encode()


def _read_card(source: str) -> dict[str, Any]:
    document = parse_json(read_bytes(source, "card"), source)
    if not isinstance(document, dict):
        raise CliError(f"{source}: an Agent Card must be a JSON object", ExitCode.FAILED)
    return document


@card.command("canonicalize")
@click.argument("card_file", metavar="CARD")
@click.option(
    "--form",
    type=click.Choice(FORMS),
    default="sdk",
    show_default=True,
    help="sdk: what the official SDKs sign; strict: the spec text's rule; plain: JCS of the card.",
)
@reports_errors
def canonicalize_command(card_file: str, form: str) -> None:
    """Print the exact bytes a signature over CARD covers (`-` reads standard input).

    \f
    Raises CliError: exit 1 when the card has no canonical form, 2 when it cannot be read.
    """
    from signing import canonicalize

    with signing_errors():
        payload = canonicalize(_read_card(card_file), form)
    write_stdout(payload)


@card.command("sign")
@click.argument("card_file", metavar="CARD")
@click.option("--key", "key_source", required=True, metavar="KEY", help=f"Private key: {SOURCES_HELP}.")
@click.option("--kid", help="Key id for the header (default: the key's kid, else its RFC 7638 thumbprint).")
@click.option("--jku", help="URL of the JWKS that publishes the public key (https).")
@click.option("--out", "out", default=STDIO, show_default=True, help="Where to write the signed card.")
@click.option("--password-env", metavar="VAR", help="Environment variable holding the key's password.")
@click.option("--append", is_flag=True, help="Keep an existing signature with the same kid (default: replace it).")
@reports_errors
def sign_command(
    card_file: str, key_source: str, kid: str | None, jku: str | None, out: str, password_env: str | None, append: bool
) -> None:
    """Sign CARD with a detached JWS; a signature under the same kid is replaced, others are kept.

    The payload is the card's canonical form that the official SDKs verify (see `canonicalize`).
    Fields that form does not cover (unknown fields, 0.3 compatibility fields on a v1.0 card)
    are listed on standard error. Signing the same card with the same key again gives the same
    bytes (EdDSA, RS256), so a pipeline can diff its output.

    \f
    Raises CliError: exit 1 when the card cannot be signed, 2 for an unreadable card or key.
    """
    from signing import canonical_payload, sign_card

    if key_source == STDIO and card_file == STDIO:
        raise CliError("the key and the card cannot both come from standard input", ExitCode.USAGE)
    with signing_errors(), contextlib.ExitStack() as token_session:
        key = load_private_key(key_source, password_from(password_env), token_session)
        document = _read_card(card_file)
        signed = sign_card(document, key, kid=kid, jku=jku, append=append)
        uncovered = canonical_payload(document).uncovered
    _write(out, (json.dumps(signed, indent=2, ensure_ascii=False) + "\n").encode())
    click.echo(f"signed with {key.algorithm.value} key {kid or key.kid}", err=True)
    if uncovered:
        click.echo(f"warning: the signature does not cover {', '.join(uncovered)}", err=True)


def _write(out: str, data: bytes) -> None:
    if out == STDIO:
        write_stdout(data)
        return
    try:
        Path(out).write_bytes(data)
    except OSError as error:
        raise CliError(f"cannot write {out}: {error.strerror or error}", ExitCode.USAGE) from None


@card.command("verify")
@click.argument("card_file", metavar="CARD")
@click.option("--jwks", "jwks", multiple=True, metavar="FILE_OR_URL", help="Trusted JWKS (file, or https URL).")
@click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="KEY",
    help="Trusted key (its public half): a PEM, JWK or JWKS file; `-`; env:VAR; or a pkcs11: URI.",
)
@click.option(
    "--allow-origin",
    "origins",
    multiple=True,
    metavar="ORIGIN",
    help="Follow a signature's jku when it is on this https origin.",
)
@click.option(
    "--require-kid", "required_kids", multiple=True, metavar="KID", help="A valid signature with this kid is required."
)
@click.option(
    "--policy",
    type=click.Choice(["any", "all"]),
    default="any",
    show_default=True,
    help="any: at least one valid signature; all: every signature valid.",
)
@format_option
@click.option("--json", "as_json", is_flag=True, help="Print the per-signature results as JSON (--format json).")
@click.option("--password-env", metavar="VAR", help="Password for an encrypted private PEM or token given as --key.")
@click.option(
    "--unsafe-allow-http-loopback",
    is_flag=True,
    help="UNSAFE, for tests: allow plain-http JWKS URLs on 127.0.0.1/localhost.",
)
@reports_errors
def verify_command(
    card_file: str,
    jwks: tuple[str, ...],
    keys: tuple[str, ...],
    origins: tuple[str, ...],
    required_kids: tuple[str, ...],
    policy: str,
    output_format: str,
    as_json: bool,
    password_env: str | None,
    unsafe_allow_http_loopback: bool,
) -> None:
    """Verify CARD's signatures with the keys you trust (`-` reads standard input).

    Give the keys (--key) as files, in an environment variable (env:VAR, as CI hands over a
    secret; a private key there is used for its public half), on standard input (`-`) or in a
    PKCS#11 token (pkcs11: URI); or give JWKS files or URLs (--jwks), or let a signature's jku be
    followed on origins you name (--allow-origin).

    \b
    For example, with the signing key a CI secret hands over:
      agentdex card verify signed.json --key env:CARD_SIGNING_KEY

    Exit 0 when the policy holds, 1 when a signature is invalid or missing, 3 when no key could
    be resolved, 2 for usage errors. --format github prints GitHub workflow annotations,
    --format junit a JUnit XML report (a testcase per signature), for CI systems to show.

    \f
    Raises CliError (exit 1, 2 or 3, as above) when the card or a key cannot be read or fetched.
    """
    from signing import PolicyMode, VerificationPolicy, verify_card

    output_format = chosen_format(output_format, as_json)
    if card_file == STDIO and STDIO in keys:
        raise CliError("the key and the card cannot both come from standard input", ExitCode.USAGE)
    with signing_errors(), contextlib.ExitStack() as token_session:
        password = password_from(password_env)
        resolver = verification_resolver(jwks, keys, origins, password, unsafe_allow_http_loopback, token_session)
        document = _read_card(card_file)
        result = verify_card(
            document, resolver, VerificationPolicy(mode=PolicyMode(policy), required_kids=frozenset(required_kids))
        )
    if output_format in CI_FORMATS:
        click.echo(render([checked_signatures(result, card_file, policy)], output_format))
    else:
        click.echo(
            json.dumps(result.to_dict(), indent=2) if output_format == "json" else describe(result, card_file, policy)
        )
    if not (jwks or keys or origins) and not result.ok:
        click.echo("hint: no keys given; pass --key, --jwks or --allow-origin", err=True)
    sys.exit(int(verify_exit_code(result)))


def verification_resolver(
    jwks: tuple[str, ...],
    keys: tuple[str, ...],
    origins: tuple[str, ...],
    password: bytes | None,
    unsafe: bool,
    token_session: contextlib.ExitStack,
) -> KeyResolver:
    """The keys `verify` (and `publish`) trust: `keys` from any key source (`cli.key_sources`;
    a token key stays usable until `token_session` closes), JWKS files, JWKS URLs, jku on `origins`.

    Raises signing's KeyFormatError for an unusable key file, PolicyError for a refused URL,
    and CliError (exit 2) for a file or variable that cannot be read.
    """
    from signing import ChainResolver, JwksUrlResolver, StaticKeyResolver, UnsafeHttpLoopback, load_verification_keys

    urls = [source for source in jwks if source.startswith(("https://", "http://"))]
    resolvers: list[KeyResolver] = [
        StaticKeyResolver(load_public_keys(key, password, token_session), f"key:{key}") for key in keys
    ]
    resolvers += [
        StaticKeyResolver(load_verification_keys(read_bytes(path, "key"), password), f"jwks:{path}")
        for path in jwks
        if path not in urls
    ]
    if urls or origins:
        unsafe_option = UnsafeHttpLoopback() if unsafe else None
        resolvers.append(JwksUrlResolver(urls, allowed_origins=origins, unsafe=unsafe_option))
    return ChainResolver(resolvers)


def verify_exit_code(result: VerificationResult) -> ExitCode:
    """0 when the policy holds; 3 when every failing signature only lacked a key; else 1."""
    from signing import Outcome

    if result.ok:
        return ExitCode.OK
    failing = [s for s in result.signatures if s.outcome is not Outcome.VALID]
    if failing and all(s.outcome is Outcome.KEY_NOT_FOUND for s in failing):
        return ExitCode.UNRESOLVED
    return ExitCode.FAILED


def describe(result: VerificationResult, source: str, policy: str) -> str:
    """The human form: a verdict line, then one line per signature (and what it does not cover)."""
    name = "standard input" if source == STDIO else source
    lines = [f"{name}: {'verified' if result.ok else 'NOT VERIFIED'} (policy {policy}) — {result.reason}"]
    for s in result.signatures:
        facts = [f"kid={s.kid}", f"alg={s.alg}"]
        if s.form is not None:
            facts += [f"form={s.form.value}", f"source={s.key_source}"]
        lines.append(f"  #{s.index} {s.outcome.value:<13} {' '.join(facts)}" + ("" if s.form else f" — {s.detail}"))
        if s.uncovered:
            lines.append(f"      not covered: {', '.join(s.uncovered)}")
    return "\n".join(lines)


def checked_signatures(result: VerificationResult, source: str, policy: str) -> CheckedFile:
    """The result for `cli.ci_report`: a case per signature (its outcome is the rule id), and one
    for the policy. A signature that did not verify is an error when the policy fails, else a
    warning (policy `any` holds with another signature)."""
    from signing import Outcome

    severity: Severity = "warning" if result.ok else "error"
    cases = [
        Case(
            f"signature #{s.index} kid={s.kid}",
            ()
            if s.outcome is Outcome.VALID
            else (Finding(severity, s.outcome.value, f"signature #{s.index} (kid {s.kid}): {s.detail}"),),
        )
        for s in result.signatures
    ]
    verdict = () if result.ok else (Finding("error", "policy", f"policy {policy} does not hold: {result.reason}"),)
    return CheckedFile(source, (*cases, Case(f"policy {policy}", verdict)))
