"""Verifying an Agent Card's signatures (A2A §8.4.3) against a key resolver and a policy.

Bad signatures are results, not exceptions: every signature gets an `Outcome` with its kid,
alg, the key source that verified it, the canonical form that matched and the card fields
that form leaves uncovered. The canonical payloads are computed once per card and form, and
shared by every signature and candidate key.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from signing import json_input
from signing.algorithms import CARD_ALGORITHMS, Algorithm, parse_algorithm
from signing.canonical import CanonicalForm, CanonicalPayload, canonical_payload
from signing.errors import (
    CanonicalizationError,
    CardFormatError,
    MalformedSignatureError,
    PolicyError,
    SigningError,
    UnsupportedSignatureError,
)
from signing.jws import (
    MAX_PROTECTED_HEADER_BYTES,
    MAX_SIGNATURE_BYTES,
    JwsHeader,
    b64url_decode,
    b64url_encode,
    parse_header,
)
from signing.keys import VerificationKey
from signing.resolvers import KeyResolver


class Outcome(enum.StrEnum):
    """What became of one signature."""

    VALID = "valid"
    INVALID = "invalid"  # a usable key was found and the signature does not match any form
    KEY_NOT_FOUND = "key_not_found"
    UNSUPPORTED = "unsupported"  # alg/crit/b64 refused, or the only keys are unusable for it
    MALFORMED = "malformed"


class PolicyMode(enum.StrEnum):
    """Which signatures must be valid."""

    ANY = "any"  # at least one
    ALL = "all"  # every one (and at least one)


@dataclass(frozen=True)
class VerificationPolicy:
    """When a card counts as verified. An empty algorithm or form list is an error.

    Raises PolicyError for an empty or unknown algorithm set, or no canonical forms.
    """

    mode: PolicyMode = PolicyMode.ANY
    required_kids: frozenset[str] = frozenset()
    algorithms: frozenset[Algorithm] = CARD_ALGORITHMS
    forms: tuple[CanonicalForm, ...] = tuple(CanonicalForm)

    def __post_init__(self) -> None:
        try:
            algorithms = frozenset(parse_algorithm(str(a)) for a in self.algorithms)
        except SigningError as error:
            raise PolicyError(f"policy names an algorithm that cannot be allowed: {error}") from error
        if not algorithms or not self.forms:
            raise PolicyError("a verification policy needs at least one algorithm and one canonical form")
        object.__setattr__(self, "mode", PolicyMode(self.mode))
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "forms", tuple(CanonicalForm(f) for f in self.forms))
        object.__setattr__(self, "required_kids", frozenset(self.required_kids))


@dataclass(frozen=True)
class SignatureResult:
    """The outcome of one entry of `signatures` (by index), with everything known about it."""

    index: int
    outcome: Outcome
    kid: str | None = None
    alg: str | None = None
    key_source: str | None = None
    key_thumbprint: str | None = None
    form: CanonicalForm | None = None
    uncovered: tuple[str, ...] = ()
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (enums as their values)."""
        data = asdict(self)
        data.update(
            outcome=self.outcome.value, form=self.form.value if self.form else None, uncovered=list(self.uncovered)
        )
        return data


@dataclass(frozen=True)
class VerificationResult:
    """Whether the policy holds, why, and the per-signature results."""

    ok: bool
    reason: str
    signatures: tuple[SignatureResult, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"ok": self.ok, "reason": self.reason, "signatures": [s.to_dict() for s in self.signatures]}


DEFAULT_POLICY = VerificationPolicy()


def verify_card(
    card: Mapping[str, Any],
    resolver: KeyResolver,
    policy: VerificationPolicy = DEFAULT_POLICY,
    *,
    payloads: CardPayloads | None = None,
) -> VerificationResult:
    """Verify every signature of `card` with keys from `resolver`, then apply `policy`.

    `payloads` (built for this same card) lets a caller share the canonical forms with a later
    `sign_card` of the card, e.g. a registry that verifies and then countersigns.

    Raises CardFormatError only if `card` is not a JSON object or its `signatures` is not a
    list; every problem with a single signature is reported in its `SignatureResult`.
    """
    if not isinstance(card, Mapping):
        raise CardFormatError(f"an Agent Card must be a JSON object, not {type(card).__name__}")
    entries = card.get("signatures") or []
    if not isinstance(entries, list):
        raise CardFormatError('the card\'s "signatures" must be a list')
    payloads = payloads or CardPayloads(card)
    results = tuple(_verify_one(i, entry, payloads, resolver, policy) for i, entry in enumerate(entries))
    return _judge(results, policy)


class CardPayloads:
    """Canonical payloads of one card, computed on first use per form, shared by every
    signature and candidate key of `verify_card` and by `sign_card(..., payloads=)`."""

    def __init__(self, card: Mapping[str, Any]) -> None:
        self._card = card
        self._done: dict[CanonicalForm, tuple[CanonicalPayload, str] | str] = {}

    def get(self, form: CanonicalForm) -> tuple[CanonicalPayload, str] | str:
        """(payload, its base64url) or the reason the card has no such form."""
        found = self._done.get(form)
        if found is None:
            try:
                payload = canonical_payload(self._card, form)
                found = (payload, b64url_encode(payload.data))
            except CanonicalizationError as error:
                found = f"{form.value} form: {error}"
            self._done[form] = found
        return found


def _verify_one(
    index: int, entry: object, payloads: CardPayloads, resolver: KeyResolver, policy: VerificationPolicy
) -> SignatureResult:
    try:
        header, signature = _parse_entry(entry)
    except MalformedSignatureError as error:
        return SignatureResult(index, Outcome.MALFORMED, detail=str(error))
    except UnsupportedSignatureError as error:
        kid, alg = _peek(entry)
        return SignatureResult(index, Outcome.UNSUPPORTED, kid, alg, detail=str(error))
    if header.alg not in policy.algorithms:
        detail = f"alg {header.alg.value} is not allowed by the verification policy"
        return SignatureResult(index, Outcome.UNSUPPORTED, header.kid, header.alg.value, detail=detail)
    return _Attempt(index, header, entry["protected"], signature).run(payloads, resolver, policy)  # type: ignore[index]


def _parse_entry(entry: object) -> tuple[JwsHeader, bytes]:
    if not isinstance(entry, Mapping):
        raise MalformedSignatureError("a signature must be a JSON object with protected and signature")
    header = parse_header(entry.get("protected"), entry.get("header"))
    signature = b64url_decode(entry.get("signature"), limit=MAX_SIGNATURE_BYTES, what="signature")  # type: ignore[arg-type]
    return header, signature


def _peek(entry: object) -> tuple[str | None, str | None]:
    """kid and alg of a header that was refused, for the report only."""
    try:
        raw = b64url_decode(entry["protected"], limit=MAX_PROTECTED_HEADER_BYTES, what="header")  # type: ignore[index]
        header = json_input.loads(raw)
    except (SigningError, TypeError, KeyError):
        return None, None
    if not isinstance(header, dict):
        return None, None
    kid, alg = header.get("kid"), header.get("alg")
    return (kid if isinstance(kid, str) else None), (alg if isinstance(alg, str) else None)


class _Attempt:
    """Verification of one well-formed signature across key sources, keys and forms."""

    def __init__(self, index: int, header: JwsHeader, protected: str, signature: bytes) -> None:
        self.index, self.header, self.protected, self.signature = index, header, protected, signature
        self.tried_keys = False
        self.unusable: list[str] = []
        self.problems: list[str] = []

    def run(self, payloads: CardPayloads, resolver: KeyResolver, policy: VerificationPolicy) -> SignatureResult:
        alg = self.header.alg
        try:
            for lookup in resolver.resolve(self.header.kid, self.header.jku):
                self.problems += lookup.problems
                self.unusable += lookup.rejected
                usable = [key for key in lookup.keys if alg in key.algorithms]
                self.unusable += [_mismatch(key, alg) for key in lookup.keys if alg not in key.algorithms]
                match = self._match(usable, payloads, policy.forms) if usable else None
                if match is not None:
                    return self._valid(lookup.source, *match)
        except SigningError as error:  # a resolver must not raise; if one does, report it
            self.problems.append(f"key resolution failed: {error}")
        return self._failure()

    def _match(
        self, keys: list[VerificationKey], payloads: CardPayloads, forms: Iterable[CanonicalForm]
    ) -> tuple[VerificationKey, CanonicalPayload] | None:
        self.tried_keys = True
        seen: set[str] = set()
        for form in forms:
            found = payloads.get(form)
            if isinstance(found, str):
                self.problems.append(found)
                continue
            payload, payload_b64 = found
            if payload_b64 in seen:  # e.g. the strict form equals the SDK form for this card
                continue
            seen.add(payload_b64)
            signing_input = f"{self.protected}.{payload_b64}".encode("ascii")
            for key in keys:
                if key.verify(self.header.alg, self.signature, signing_input):
                    return key, payload
        return None

    def _valid(self, source: str, key: VerificationKey, payload: CanonicalPayload) -> SignatureResult:
        h = self.header
        detail = f"verified with {source} in the {payload.form.value} form"
        return SignatureResult(
            self.index,
            Outcome.VALID,
            h.kid,
            h.alg.value,
            source,
            key.thumbprint,
            payload.form,
            payload.uncovered,
            detail,
        )

    def _failure(self) -> SignatureResult:
        h = self.header
        if self.tried_keys:
            outcome, detail = Outcome.INVALID, "the signature does not match the card in any canonical form"
        elif self.unusable:
            outcome, detail = Outcome.UNSUPPORTED, "; ".join(self.unusable)
        else:
            outcome, detail = Outcome.KEY_NOT_FOUND, f"no key found for kid {h.kid!r}"
        notes = [n for n in (self.unusable if outcome is Outcome.INVALID else []) + self.problems if n]
        if notes:
            detail = f"{detail} ({'; '.join(dict.fromkeys(notes))})"
        return SignatureResult(self.index, outcome, h.kid, h.alg.value, detail=detail)


def _mismatch(key: VerificationKey, alg: Algorithm) -> str:
    reason = key.problem or f"it is a {key.key_type.value} key, which does not admit {alg.value}"
    return f"key {key.kid or key.thumbprint} cannot verify this signature: {reason}"


def _judge(results: tuple[SignatureResult, ...], policy: VerificationPolicy) -> VerificationResult:
    if not results:
        return VerificationResult(False, "the card has no signatures", results)
    valid = [r for r in results if r.outcome is Outcome.VALID]
    missing = sorted(policy.required_kids - {r.kid for r in valid if r.kid})
    if missing:
        return VerificationResult(False, f"no valid signature with required kid {', '.join(missing)}", results)
    if policy.mode is PolicyMode.ALL and len(valid) != len(results):
        return VerificationResult(
            False, f"{len(results) - len(valid)} of {len(results)} signatures are not valid", results
        )
    if not valid:
        return VerificationResult(False, "no signature is valid", results)
    return VerificationResult(True, f"{len(valid)} of {len(results)} signatures valid", results)
