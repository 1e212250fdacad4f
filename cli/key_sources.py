"""Where a `--key` comes from, so that release pipelines need no key file on disk.

A key source is a file path; `-` (standard input); `env:VAR` (the PEM or private JWK text in
environment variable VAR, which is how CI systems hand over secrets); or an RFC 7512 `pkcs11:`
URI (the key stays in the token, see `signing.pkcs11_keys`). A file literally named `env:X` or
`pkcs11:X` is still reachable as `./env:X`. Key text read from a variable or standard input
stays in memory, and a message about it names the variable, never a part of the key.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from cli.exits import CliError, ExitCode
from cli.files import STDIO, read_bytes

if TYPE_CHECKING:
    from signing import KeySet, SigningKey

ENV_PREFIX = "env:"
PKCS11_PREFIX = "pkcs11:"
SOURCES_HELP = (
    "a PEM or private JWK file; `-` for standard input; env:VAR for the key text in an environment "
    "variable; or a pkcs11: URI (RFC 7512), e.g. 'pkcs11:token=T;object=L?module-path=/lib.so"
    "&pin-source=env:PIN' (the key stays in the token)"
)
T = TypeVar("T")
_LEAK_WINDOW = 8  # a message holding any run of this many key characters is not printed


def load_private_key(source: str, password: bytes | None, stack: contextlib.ExitStack) -> SigningKey:
    """The signing key `source` names; a token key stays usable until `stack` closes.

    Raises CliError (exit 2: variable unset or empty, unreadable file, not a key) or the
    signing errors of `load_signing_key` / `open_pkcs11_key` (TokenKeyError, WeakKeyError, ...).
    """
    from signing import load_signing_key, open_pkcs11_key

    if source.startswith(PKCS11_PREFIX):
        return stack.enter_context(open_pkcs11_key(source, environ=os.environ))
    if source == STDIO or source.startswith(ENV_PREFIX):
        name, text = _secret(source)
        return _without_key_text(name, text, lambda: load_signing_key(text, password))
    return load_signing_key(read_bytes(source, "key"), password)


def load_public_keys(source: str, password: bytes | None, stack: contextlib.ExitStack) -> KeySet:
    """The public keys `source` holds (a private key gives its public half; a file or variable
    may also hold a public PEM, a JWK or a JWKS).

    Raises CliError (exit 2) or signing errors, as `load_private_key`.
    """
    from signing import KeySet, load_verification_keys

    if source.startswith(PKCS11_PREFIX):
        return KeySet((load_private_key(source, password, stack).public,))
    if source == STDIO or source.startswith(ENV_PREFIX):
        name, text = _secret(source)
        return _without_key_text(name, text, lambda: load_verification_keys(text, password))
    return load_verification_keys(read_bytes(source, "key"), password)


def _secret(source: str) -> tuple[str, bytes]:
    if source == STDIO:
        return "standard input", read_bytes(STDIO)
    variable = source.removeprefix(ENV_PREFIX)
    name = f"environment variable {variable}"
    value = os.environ.get(variable)
    if not variable or value is None:
        raise CliError(f"{name or source} (--key {source}) is not set", ExitCode.USAGE)
    if not value.strip():
        raise CliError(f"{name} (--key {source}) is empty", ExitCode.USAGE)
    return name, value.encode()


def _without_key_text(name: str, text: bytes, load: Callable[[], T]) -> T:
    from signing import KeyFormatError

    try:
        return load()
    except KeyFormatError as error:
        message = str(error)
        if _quotes(message, text.decode("utf-8", "replace")):
            message = "not a usable private key (PEM or private JWK)"
        raise CliError(f"{name}: {message}", ExitCode.USAGE) from None


def _quotes(message: str, secret: str) -> bool:
    runs = (secret[i : i + _LEAK_WINDOW] for i in range(max(len(secret) - _LEAK_WINDOW + 1, 1)))
    return any(run.strip() and run in message for run in runs)
