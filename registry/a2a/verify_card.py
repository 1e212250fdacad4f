"""The `verify-card` skill: an Agent Card (given, or fetched from its URL through the registry's
safe HTTP client) judged as the registry judges the cards it lists: the validation report of
`POST /v1/validate` (`registry.validation.validate_card`) and the signature verdict of the trust
service (`TrustService.assess`, the keys its policy allows for the card's URL). Nothing is stored.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from registry import jsontext
from registry.a2a.errors import InvalidParams
from registry.a2a.messages import COMPLETED, FAILED, text_part
from registry.a2a.skills import CARD_FIELDS, Call, Outcome, artifact, command
from registry.catalog import CardFetcher, api_time, canonical_card_url
from registry.db.types import utcnow
from registry.errors import InvalidRequest, RegistryError
from registry.outbound import OutboundRefused
from registry.trust import CardTrust, TrustService
from registry.validation import CardLimits, ValidationReport, validate_card


@dataclasses.dataclass(frozen=True)
class CardToVerify:
    """A card and where it comes from (a `registry.trust` card subject)."""

    card: dict[str, Any]
    raw: bytes
    card_url: str
    source: str
    fetched_from: str | None
    fetched_at: dt.datetime


class VerifyCard:
    def __init__(
        self,
        fetcher: CardFetcher,
        trust: TrustService,
        limits: CardLimits,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._fetcher = fetcher
        self._trust = trust
        self._limits = limits
        self._clock = clock

    def __call__(self, call: Call) -> Outcome:
        card_or_url = _asked(call)
        if isinstance(card_or_url, str):
            try:
                subject = self._fetched(card_or_url)
            except (InvalidRequest, OutboundRefused):
                raise  # the URL itself is refused: the caller can fix it
            except RegistryError as error:  # unreachable, not found, not JSON, too large
                return Outcome(FAILED, message=[text_part(f"The card could not be fetched: {error.message}")])
        else:
            subject = self._given(card_or_url)
        report = validate_card(subject.card, limits=self._limits, raw_size=len(subject.raw))
        trust = self._trust.assess(subject, self._trust.scope_of_url(subject.card_url), endorse=False)
        verdict = {"cardUrl": subject.card_url or None, "validation": report.to_dict(), "signature": _signature(trust)}
        text = _summary(report, trust)
        return Outcome(
            COMPLETED,
            [artifact("verdict", "Validation report and signature verdict", verdict, text, call.output_modes)],
        )

    def _fetched(self, url: str) -> CardToVerify:
        fetched = self._fetcher.discover(url)
        if not isinstance(fetched.card, dict):
            raise InvalidParams(f"{fetched.card_url} serves JSON that is not an Agent Card object")
        card_url = canonical_card_url(fetched.card_url)
        return CardToVerify(fetched.card, fetched.body, card_url, "crawled", fetched.card_url, fetched.fetched_at)

    def _given(self, fields: dict[str, Any]) -> CardToVerify:
        card, card_url = fields.get("card", fields), fields.get("cardUrl") if "card" in fields else None
        if not isinstance(card, dict):
            raise InvalidParams("card must be an object: the Agent Card")
        if card_url is not None and not isinstance(card_url, str):
            raise InvalidParams("cardUrl must be a string: where the card is published")
        url = canonical_card_url(card_url) if card_url else ""
        return CardToVerify(card, jsontext.dumps(card), url, "pushed", None, self._clock())


def _asked(call: Call) -> dict[str, Any] | str:
    """The card (an object) or its URL the message gives. Raises InvalidParams."""
    said = command(call.message)
    if said is not None:
        return said[1]
    fields = [data for data in call.message.data if isinstance(data, dict)]
    if len(fields) != 1 or len(call.message.data) != 1:
        raise InvalidParams('verify-card takes one data part: {"card": {...}} or {"url": "https://..."}')
    given = fields[0]
    url = given.get("url", given.get("cardUrl")) if "card" not in given else None
    if url is not None:
        if not isinstance(url, str):
            raise InvalidParams("url must be a string: the card's URL or the agent's base URL")
        return url
    if not given.keys() & set(CARD_FIELDS) and not given.get("name"):
        raise InvalidParams('verify-card takes {"card": {...}} or {"url": "https://..."}')
    return given


def _signature(trust: CardTrust) -> dict[str, Any]:
    """The verdict as `GET /v1/agents/{id}/signatures` reports a stored card's."""
    return {
        "state": trust.state,
        "kids": list(trust.kids),
        "reason": trust.reason or None,
        "checkedAt": api_time(trust.checked_at),
        "signatures": [
            {
                "index": check.index,
                "outcome": check.outcome.value,
                "kid": check.kid,
                "alg": check.alg,
                "keySource": check.key_source,
                "keyThumbprint": check.key_thumbprint,
                "form": check.form.value if check.form else None,
                "uncovered": list(check.uncovered),
                "detail": check.detail,
            }
            for check in trust.checks
        ],
    }


def _summary(report: ValidationReport, trust: CardTrust) -> str:
    version = f"A2A {report.protocol_version}" if report.protocol_version else "an unknown A2A version"
    warnings = len(report.issues) - len(report.errors)
    if report.valid:
        verdict = f"The card is valid ({version}){f', with {warnings} warning(s)' if warnings else ''}."
    else:
        first = report.errors[0]
        verdict = f"The card is NOT valid ({version}): {len(report.errors)} error(s), first {first.path or '/'}: {first.message}"
    kids = f" (key {', '.join(trust.kids)})" if trust.kids else ""
    return f"{verdict} Signature: {trust.state}{kids}."
