"""Signing an Agent Card: append one detached JWS to its `signatures` (A2A §8.4.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signing.canonical import CanonicalForm, canonicalize
from signing.errors import CanonicalizationError, CardFormatError, HeaderError
from signing.jws import b64url_encode, build_protected_header, encode_protected_header, sign_detached
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
) -> dict[str, Any]:
    """A copy of `card` with one more signature; existing signatures are kept (key rotation =
    two signatures). The protected header is `{"alg", "kid", "typ": "JOSE"}` plus `jku` and
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
    signed["signatures"] = [*existing, entry]
    return signed


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
