"""Reading and writing keys: PEM (optionally password-protected), JWK and JWK Sets.

A PEM written here carries the key's `kid` and `alg` as RFC 7468 §5.2 explanatory text
before the `-----BEGIN` line (`kid: ...`, `alg: ...`); readers that do not know this simply
skip it, and PEMs without it get the thumbprint as kid and the key type's default alg.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from signing import json_input
from signing.errors import JsonInputError, JsonSyntaxError, KeyFormatError, SigningError
from signing.keys import (
    SigningKey,
    VerificationKey,
    import_jwk,
    private_jwk,
    signing_key,
    verification_key,
)

MAX_JWKS_KEYS = 100
_PEM_BEGIN = b"-----BEGIN "
_METADATA_NAMES = ("kid", "alg")


@dataclass(frozen=True)
class RejectedKey:
    """A key in a JWKS that cannot be used, and why (weak, symmetric, wrong `use`, malformed)."""

    kid: str | None
    reason: str


@dataclass(frozen=True)
class KeySet:
    """Usable keys by kid, plus the keys that were rejected (so a lookup can say why)."""

    keys: tuple[VerificationKey, ...]
    rejected: tuple[RejectedKey, ...] = ()
    _by_kid: dict[str | None, list[VerificationKey]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key in self.keys:
            self._by_kid.setdefault(key.kid, []).append(key)

    def select(self, kid: str | None) -> list[VerificationKey]:
        """Keys published under `kid`, then anonymous keys; every key when `kid` is None."""
        if kid is None:
            return list(self.keys)
        return self._by_kid.get(kid, []) + self._by_kid.get(None, [])

    def rejections(self, kid: str | None) -> list[str]:
        """Why keys published under `kid` (or anonymous ones) were rejected."""
        return [r.reason for r in self.rejected if r.kid in (kid, None) or kid is None]


def load_private_key_pem(data: bytes, password: bytes | None = None) -> SigningKey:
    """A signing key from PEM (PKCS#8, traditional or encrypted), honouring `kid:`/`alg:` lines.

    Raises KeyFormatError (not a private key PEM, wrong or missing password), WeakKeyError or
    UnsupportedAlgorithmError (see `signing_key`).
    """
    metadata = _pem_metadata(data)
    try:
        private_key = serialization.load_pem_private_key(data, password)
    except TypeError as error:  # cryptography: password given/needed mismatch
        raise KeyFormatError(f"{error}; pass the key password (or none for an unencrypted key)") from error
    except (ValueError, UnsupportedAlgorithm) as error:
        raise KeyFormatError(f"not a usable private key PEM (or wrong password): {error}") from error
    return signing_key(private_key, kid=metadata.get("kid"), alg=metadata.get("alg"))


def save_private_key_pem(key: SigningKey, password: bytes | None = None) -> bytes:
    """PKCS#8 PEM of `key`, encrypted with `password` when given, with `kid:`/`alg:` lines."""
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    )
    pem = key.private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    header = f"kid: {key.kid}\nalg: {key.algorithm.value}\n".encode()
    return header + pem


def load_public_key_pem(data: bytes) -> VerificationKey:
    """A verification key from a public-key PEM (SubjectPublicKeyInfo); kid from a `kid:` line or None.

    Raises KeyFormatError if the PEM is not a supported public key.
    """
    metadata = _pem_metadata(data)
    try:
        public_key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as error:
        raise KeyFormatError(f"not a usable public key PEM: {error}") from error
    return verification_key(public_key, kid=metadata.get("kid"), alg=metadata.get("alg"))


def load_private_jwk(jwk: Mapping[str, Any]) -> SigningKey:
    """A signing key from a private JWK, using its `kid` and `alg` members when present.

    Raises KeyFormatError (malformed, symmetric or public-only JWK), WeakKeyError,
    UnsupportedAlgorithmError.
    """
    private_key = import_jwk(jwk)
    if not hasattr(private_key, "public_key"):
        raise KeyFormatError("this JWK has no private part ('d'); a signing key needs one")
    return signing_key(private_key, kid=_optional_str(jwk, "kid"), alg=_optional_str(jwk, "alg"))


def load_public_jwk(jwk: Mapping[str, Any]) -> VerificationKey:
    """A verification key from a JWK (private members are ignored).

    Raises KeyFormatError if it is malformed, symmetric, or marked for another use
    (`use` other than `sig`, `key_ops` without `verify`); UnsupportedAlgorithmError if its
    `alg` does not fit the key. Weak keys load, flagged with a `problem`.
    """
    crypto_key = import_jwk(jwk)
    public_key = crypto_key.public_key() if hasattr(crypto_key, "public_key") else crypto_key
    if jwk.get("use", "sig") != "sig":
        raise KeyFormatError(f"JWK use is {jwk.get('use')!r}, not 'sig'")
    key_ops = jwk.get("key_ops")
    if key_ops is not None and (not isinstance(key_ops, list) or "verify" not in key_ops):
        raise KeyFormatError(f"JWK key_ops {key_ops!r} does not include 'verify'")
    return verification_key(public_key, kid=_optional_str(jwk, "kid"), alg=_optional_str(jwk, "alg"))


def parse_jwks(document: Mapping[str, Any] | bytes | str) -> KeySet:
    """The usable and rejected keys of a JWK Set (RFC 7517 §5).

    Raises KeyFormatError if the document is not a JSON object with a `keys` list (of at
    most 100 entries). Individual bad keys are rejected with a reason, not raised.
    """
    if isinstance(document, bytes | str):
        document = _json_object(document, "JWKS")
    keys = document.get("keys") if isinstance(document, Mapping) else None
    if not isinstance(keys, list):
        raise KeyFormatError('a JWKS must be a JSON object with a "keys" list')
    if len(keys) > MAX_JWKS_KEYS:
        raise KeyFormatError(f"JWKS has {len(keys)} keys; at most {MAX_JWKS_KEYS} are accepted")
    usable: list[VerificationKey] = []
    rejected: list[RejectedKey] = []
    for entry in keys:
        kid = entry.get("kid") if isinstance(entry, Mapping) and isinstance(entry.get("kid"), str) else None
        try:
            key = load_public_jwk(entry)
        except SigningError as error:
            rejected.append(RejectedKey(kid, f"key {kid or '(no kid)'} rejected: {error}"))
            continue
        if key.problem:
            rejected.append(RejectedKey(kid, f"key {kid or '(no kid)'} rejected: {key.problem}"))
        else:
            usable.append(key)
    return KeySet(tuple(usable), tuple(rejected))


def load_signing_key(data: bytes, password: bytes | None = None) -> SigningKey:
    """A signing key from a PEM or a private JWK (JSON) file's bytes.

    Raises KeyFormatError, WeakKeyError or UnsupportedAlgorithmError.
    """
    if _PEM_BEGIN in data:
        return load_private_key_pem(data, password)
    return load_private_jwk(_json_object(data, "key file"))


def load_verification_keys(data: bytes, password: bytes | None = None) -> KeySet:
    """Public keys from a file's bytes: public or private PEM, a JWK, or a JWKS.

    Raises KeyFormatError if nothing in it is a usable key.
    """
    if b"-----BEGIN PUBLIC KEY" in data:
        return KeySet((load_public_key_pem(data),))
    if _PEM_BEGIN in data:
        return KeySet((load_private_key_pem(data, password).public,))
    document = _json_object(data, "key file")
    if "keys" in document:
        return parse_jwks(document)
    return KeySet((load_public_jwk(document),))


def save_private_jwk(key: SigningKey) -> bytes:
    """The private JWK of `key` as pretty JSON bytes (unencrypted: protect the file)."""
    return (json.dumps(private_jwk(key), indent=2) + "\n").encode()


def _pem_metadata(data: bytes) -> dict[str, str]:
    preamble = data.split(_PEM_BEGIN, 1)[0].decode("utf-8", "replace")
    metadata = {}
    for line in preamble.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() in _METADATA_NAMES and value.strip():
            metadata[name.strip()] = value.strip()
    return metadata


def _json_object(data: bytes | str, what: str) -> dict[str, Any]:
    try:
        document = json_input.loads(data)
    except JsonSyntaxError as error:
        raise KeyFormatError(f"{what} is neither PEM nor JSON: {error}") from error
    except JsonInputError as error:  # readers could take a repeated "k" or "kid" differently
        raise KeyFormatError(f"{what} is refused: {error}") from error
    if not isinstance(document, dict):
        raise KeyFormatError(f"{what} must be a JSON object (a JWK or a JWKS)")
    return document


def _optional_str(jwk: Mapping[str, Any], name: str) -> str | None:
    value = jwk.get(name)
    if value is not None and not isinstance(value, str):
        raise KeyFormatError(f"JWK member {name!r} must be a string")
    return value
