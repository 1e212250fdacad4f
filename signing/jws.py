"""Detached JWS (RFC 7515 Appendix F) as Agent Cards carry it: `protected` + `signature`.

Signing input = ASCII(BASE64URL(protected header) "." BASE64URL(payload)); the payload
itself (the canonical card) is not carried. Headers are checked here, before any key is
looked up: `alg` must be protected and known, `crit` (no extension is understood here) and
`b64: false` (RFC 7797) are refused, sizes are bounded and duplicate names rejected.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signing import json_input
from signing.algorithms import Algorithm, parse_algorithm
from signing.errors import (
    DuplicateMemberError,
    HeaderError,
    JsonInputError,
    MalformedSignatureError,
    UnsupportedAlgorithmError,
    UnsupportedSignatureError,
)
from signing.keys import SigningKey

MAX_PROTECTED_HEADER_BYTES = 4096
MAX_SIGNATURE_BYTES = 2048  # an RSA-16384 signature, the largest key accepted
RESERVED_HEADER_NAMES = frozenset({"alg", "kid", "typ", "jku", "crit", "b64"})
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class JwsHeader:
    """The parsed header of one signature: `alg` from the protected header; `kid` from the
    protected header, else the unprotected one (a lookup hint only); `jku` protected only."""

    alg: Algorithm
    kid: str | None
    jku: str | None
    protected: Mapping[str, Any]


def b64url_encode(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str, *, limit: int, what: str) -> bytes:
    """Strict base64url without padding, at most `limit` decoded bytes.

    Raises MalformedSignatureError for other characters, padding, bad length or size.
    """
    if not isinstance(text, str) or not _B64URL.match(text) or len(text) % 4 == 1:
        raise MalformedSignatureError(f"{what} is not base64url (RFC 7515 §2: no padding, alphabet A-Z a-z 0-9 - _)")
    if len(text) * 3 // 4 > limit:
        raise MalformedSignatureError(f"{what} is longer than {limit} bytes")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise MalformedSignatureError(f"{what} is not base64url: {error}") from error


def encode_protected_header(header: Mapping[str, Any]) -> str:
    """BASE64URL of the header's compact JSON, keys sorted (as PyJWT, hence a2a-sdk, writes them)."""
    text = json.dumps(header, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return b64url_encode(text.encode("utf-8"))


def sign_detached(payload_b64: str, protected_b64: str, key: SigningKey) -> str:
    """The base64url signature over `protected_b64 "." payload_b64` with `key`."""
    return b64url_encode(key.sign(f"{protected_b64}.{payload_b64}".encode("ascii")))


def parse_header(protected: object, unprotected: object = None) -> JwsHeader:
    """Decode and check the JOSE header of one signature.

    Raises MalformedSignatureError (not base64url/JSON/object, duplicate or clashing names,
    alg missing or unprotected, wrong member types) or UnsupportedSignatureError (alg `none`,
    HMAC or unknown; any `crit`; `b64: false`).
    """
    raw = b64url_decode(protected, limit=MAX_PROTECTED_HEADER_BYTES, what="protected header")  # type: ignore[arg-type]
    header = _json_object(raw)
    extra = _unprotected(unprotected, header)
    if "alg" not in header:
        raise MalformedSignatureError("protected header has no alg (it must be integrity-protected)")
    try:
        alg = parse_algorithm(header["alg"])
    except UnsupportedAlgorithmError as error:
        raise UnsupportedSignatureError(str(error)) from error
    _check_extensions(header)
    kid = _optional_str(header, "kid")
    if kid is None:
        kid = _optional_str(extra, "kid")
    return JwsHeader(alg, kid, _optional_str(header, "jku"), header)


def _json_object(raw: bytes) -> dict[str, Any]:
    # RFC 7515 §5.2: a header with duplicate names must be rejected (and one that is not I-JSON).
    try:
        header = json_input.loads(raw)
    except DuplicateMemberError as error:
        message = f"protected header repeats the member name {error.name[:60]!r} at {error.path}"
        raise MalformedSignatureError(f"{message} (RFC 7515 §5.2: such a JWS is rejected)") from error
    except JsonInputError as error:
        raise MalformedSignatureError(f"protected header is not UTF-8 JSON: {error}") from error
    if not isinstance(header, dict):
        raise MalformedSignatureError("protected header is not a JSON object")
    return header


def _unprotected(unprotected: object, protected: Mapping[str, Any]) -> Mapping[str, Any]:
    if unprotected is None:
        return {}
    if not isinstance(unprotected, Mapping):
        raise MalformedSignatureError("unprotected header must be a JSON object")
    clash = sorted(set(unprotected) & set(protected))
    if clash:
        raise MalformedSignatureError(f"header names {clash} appear both protected and unprotected (RFC 7515 §7.2.1)")
    for name in ("alg", "crit", "b64"):
        if name in unprotected:
            raise MalformedSignatureError(f"{name!r} must be in the protected header, not the unprotected one")
    return unprotected


def _check_extensions(header: Mapping[str, Any]) -> None:
    crit = header.get("crit")
    if crit is not None:
        if not isinstance(crit, list) or not crit or not all(isinstance(n, str) for n in crit):
            raise MalformedSignatureError("crit must be a non-empty list of header names (RFC 7515 §4.1.11)")
        raise UnsupportedSignatureError(f"crit names extensions this verifier does not understand: {crit}")
    b64 = header.get("b64", True)
    if b64 is not True:
        if b64 is False:
            raise UnsupportedSignatureError("b64: false (RFC 7797 unencoded payload) is not used for Agent Cards")
        raise MalformedSignatureError("b64 must be a boolean")


def _optional_str(header: Mapping[str, Any], name: str) -> str | None:
    value = header.get(name)
    if value is not None and not isinstance(value, str):
        raise MalformedSignatureError(f"header member {name!r} must be a string")
    return value


def build_protected_header(
    key: SigningKey, *, kid: str | None, jku: str | None, extras: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`{"alg", "kid", "typ": "JOSE"}` (A2A §8.4.2) plus `jku` and caller extras.

    Raises HeaderError if an extra uses a reserved name (alg, kid, typ, jku, crit, b64) or is
    not JSON, or if `kid`/`jku` are empty.
    """
    header: dict[str, Any] = {"alg": key.algorithm.value, "kid": kid or key.kid, "typ": "JOSE"}
    if kid is not None and not kid:
        raise HeaderError("kid must not be empty")
    if jku is not None:
        if not isinstance(jku, str) or "://" not in jku:
            raise HeaderError(f"jku must be an absolute URL, got {jku!r}")
        header["jku"] = jku
    for name, value in (extras or {}).items():
        if name in RESERVED_HEADER_NAMES:
            raise HeaderError(f"header name {name!r} is set by the signer; pass it as an argument")
        header[name] = value
    try:
        json.dumps(header)
    except (TypeError, ValueError) as error:
        raise HeaderError(f"header values must be JSON: {error}") from error
    return header
