"""The signature state of a card in words: who signed it, against which key source it verified,
whether this registry endorses it, or why not. Reads what `registry.trust` reports
(`TrustReads.report`, the shape of `GET /v1/agents/{id}/signatures`)."""

from __future__ import annotations

import dataclasses
from typing import Any

STATE_WORDS = {
    "verified": "Signed, and the signature verified.",
    "unsigned": "Not signed: the card carries no signature.",
    "unverifiable": "Signed, but no key could be found to check the signature.",
    "invalid": "Signed, but no signature is valid.",
}
OUTCOME_WORDS = {
    "valid": "verified",
    "invalid": "does not match the card: it was changed after signing, or signed with another key",
    "key_not_found": (
        "its key was not found: not among the owner's registered keys, the agent's JWKS, a JWKS the "
        "policy allows at its jku, or the operator's trust store"
    ),
    "unsupported": "uses an algorithm or key this registry refuses (none, HMAC, weak RSA)",
    "malformed": "is malformed",
}
FORM_WORDS = {
    "sdk": "the canonical form the A2A SDKs sign",
    "strict": "the canonical form of the A2A specification's text",
    "plain": "the plain RFC 8785 form of the whole card",
}


@dataclasses.dataclass(frozen=True)
class KeySource:
    """Where the verifying key came from: words, and a URL for a JWKS (shown through `card_link`)."""

    words: str
    url: str | None = None


@dataclasses.dataclass(frozen=True)
class SignatureLine:
    kid: str
    alg: str
    outcome: str
    verdict: str  # the outcome in words
    source: KeySource | None
    form: str | None
    uncovered: tuple[str, ...]
    detail: str


@dataclasses.dataclass(frozen=True)
class SignatureView:
    state: str
    headline: str
    checked_at: str | None
    lines: tuple[SignatureLine, ...]
    endorsed: bool
    endorsement: str  # why the registry endorses the card, or why not


def key_source(source: str | None) -> KeySource | None:
    """`SignatureCheck.key_source` in words (`registry.trust.KeyPolicy.resolver`'s sources)."""
    if not source:
        return None
    if source == "owner":
        return KeySource("the keys the agent's owner registered with this registry")
    if source in ("trust-store", "pinned", "pinned-jwks"):
        return KeySource("this registry's trust store (keys the operator pinned)")
    if source == "registry":
        return KeySource("this registry's own keys")
    kind, _, url = source.partition(":")
    if kind in ("jwks", "jku") and url:
        return KeySource("the JWKS at", url)
    return KeySource(source)


def signature_view(report: dict[str, Any], *, card_valid: bool, require_signatures: bool) -> SignatureView:
    """`report` (TrustReads.report) in words; `card_valid` and `require_signatures` decide the
    endorsement as `TrustReads.endorsed_card` does."""
    state = str(report.get("state") or "unverifiable")
    lines = tuple(_line(check) for check in report.get("signatures") or ())
    endorsed = card_valid and (not require_signatures or state == "verified")
    return SignatureView(
        state=state,
        headline=STATE_WORDS.get(state, state),
        checked_at=report.get("checkedAt"),
        lines=lines,
        endorsed=endorsed,
        endorsement=_endorsement(endorsed, card_valid, state),
    )


def _line(check: dict[str, Any]) -> SignatureLine:
    outcome = str(check.get("outcome") or "")
    return SignatureLine(
        kid=str(check.get("kid") or check.get("keyThumbprint") or "(no kid)"),
        alg=str(check.get("alg") or "(no alg)"),
        outcome=outcome,
        verdict=OUTCOME_WORDS.get(outcome, outcome),
        source=key_source(check.get("keySource")) if outcome == "valid" else None,
        form=FORM_WORDS.get(str(check.get("form"))) if check.get("form") else None,
        uncovered=tuple(str(field) for field in check.get("uncovered") or ()),
        detail=str(check.get("detail") or ""),
    )


def _endorsement(endorsed: bool, card_valid: bool, state: str) -> str:
    if endorsed:
        return "Endorsed by this registry: it validated this card version and signs it with its own key."
    if not card_valid:
        return "Not endorsed by this registry: this card version did not pass validation."
    return f"Not endorsed by this registry: it requires a valid signature, and this card's is {state}."
