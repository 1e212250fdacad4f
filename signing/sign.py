"""Signing an Agent Card: add one detached JWS to its `signatures` (A2A §8.4.2).

Re-signing is idempotent, so a release pipeline can run again and diff its output: a signature
already made under the same kid is replaced in place, and with a deterministic algorithm
(EdDSA, RS256) the same card and key give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signing.canonical import CanonicalForm, canonicalize
from signing.errors import CanonicalizationError, CardFormatError, HeaderError, SigningError
from signing.jws import b64url_encode, build_protected_header, encode_protected_header, parse_header, sign_detached
from signing.keys import SigningKey
from signing.verify import CardPayloads


def sign_card(
    card: Mapping[str, Any],
    key: SigningKey,
    *,
    kid: str | None = None,
    jku: str | None = None,
    header_extras: Mapping[str, Any] | None = None,
    unprotected_header: Mapping[str, Any] | None = None,
    form: CanonicalForm | str = CanonicalForm.SDK,
    payloads: CardPayloads | None = None,
    append: bool = False,
) -> dict[str, Any]:
    """A copy of `card` signed with `key`. Signatures under other kids are kept (key rotation =
    two signatures); one under the same kid is replaced where it stands (any further ones under
    that kid are dropped), unless `append` keeps them all. The protected header is `{"alg", "kid", "typ": "JOSE"}` plus `jku` and
    `header_extras`; `kid` defaults to the key's kid (its RFC 7638 thumbprint unless set).
    `payloads` (built for this same card, e.g. by a `verify_card` just before) saves computing
    the canonical form again.

    Raises CardFormatError (card not an object, `signatures` not a list),
    CanonicalizationError (no JCS form) or HeaderError (reserved or clashing header names).
    """
    if not isinstance(card, Mapping):
        raise CardFormatError(f"an Agent Card must be a JSON object, not {type(card).__name__}")
    existing = card.get("signatures") or []
    if not isinstance(existing, list):
        raise CardFormatError('the card\'s "signatures" must be a list')
    header = build_protected_header(key, kid=kid, jku=jku, extras=header_extras)
    unprotected = _unprotected_header(unprotected_header, header)
    protected = encode_protected_header(header)
    entry: dict[str, Any] = {
        "protected": protected,
        "signature": sign_detached(_payload_b64(card, CanonicalForm(form), payloads), protected, key),
    }
    if unprotected:
        entry["header"] = unprotected
    signed = dict(card)
    signed["signatures"] = [*existing, entry] if append else _replacing(existing, header["kid"], entry)
    return signed


def _replacing(existing: list[Any], kid: str, entry: dict[str, Any]) -> list[Any]:
    kept = [s for s in existing if _kid_of(s) != kid]
    if len(kept) == len(existing):
        return [*existing, entry]
    first = next(i for i, s in enumerate(existing) if _kid_of(s) == kid)
    position = sum(1 for s in existing[:first] if _kid_of(s) != kid)
    return [*kept[:position], entry, *kept[position:]]


def _kid_of(signature: object) -> str | None:
    # An entry whose header cannot be read is nobody's earlier signature: it is kept as it is.
    if not isinstance(signature, Mapping):
        return None
    try:
        return parse_header(signature.get("protected"), signature.get("header")).kid
    except SigningError:
        return None


def _payload_b64(card: Mapping[str, Any], form: CanonicalForm, payloads: CardPayloads | None) -> str:
    if payloads is None:
        return b64url_encode(canonicalize(card, form))
    found = payloads.get(form)
    if isinstance(found, str):
        raise CanonicalizationError(found)
    return found[1]


def _unprotected_header(unprotected: Mapping[str, Any] | None, protected: Mapping[str, Any]) -> dict[str, Any]:
    if not unprotected:
        return {}
    clash = sorted(set(unprotected) & (set(protected) | {"alg", "crit", "b64"}))
    if clash:
        raise HeaderError(
            f"unprotected header may not carry {clash}: they are (or must be) protected (RFC 7515 §7.2.1)"
        )
    return dict(unprotected)
