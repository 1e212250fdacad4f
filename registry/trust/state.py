"""What verification found out about one card, as it travels with the card into the catalog.

The roll-up of per-signature outcomes into one state (the issue's four):
- `unsigned`: the card has no signatures;
- `verified`: at least one signature is valid under the key policy (as the SDKs' verifiers
  accept a card when one signature verifies);
- `invalid`: none is valid and at least one is wrong: it does not match the card, is malformed,
  or uses an algorithm or key the policy refuses (`none`, HMAC, weak RSA);
- `unverifiable`: every signature is well-formed but no key could be resolved for it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from typing import Any

from signing import Outcome, SignatureResult

MAX_DETAIL = 2000


@dataclasses.dataclass(frozen=True)
class CardTrust:
    """The checks of one card version and, when it may be endorsed, the registry's signature."""

    state: str
    kids: tuple[str, ...]
    checked_at: dt.datetime
    checks: tuple[SignatureResult, ...] = ()
    reason: str = ""
    accepted: bool = True  # False when the operator requires a valid signature and this has none
    endorsement: dict[str, Any] | None = None  # {"kid", "jku", "entry"}

    def agent_columns(self) -> dict[str, Any]:
        """The roll-up as the agent's columns."""
        return {"signature_state": self.state, "signature_kids": list(self.kids), "signature_checked_at": self.checked_at}

    def check_rows(self, agent_pk: int, card_version: int) -> list[dict[str, Any]]:
        return [
            {
                "agent_pk": agent_pk, "card_version": card_version, "position": check.index,
                "outcome": check.outcome.value, "kid": _cut(check.kid, 500), "alg": _cut(check.alg, 20),
                "key_source": _cut(check.key_source, 2100), "key_thumbprint": check.key_thumbprint,
                "form": check.form.value if check.form else None, "uncovered": list(check.uncovered),
                "detail": check.detail[:MAX_DETAIL], "checked_at": self.checked_at,
            }
            for check in self.checks
        ]

    def endorsement_rows(self, agent_pk: int, card_version: int) -> list[dict[str, Any]]:
        if self.endorsement is None:
            return []
        return [{"agent_pk": agent_pk, "card_version": card_version, "signed_at": self.checked_at, **self.endorsement}]


def roll_up(checks: Iterable[tuple[str, str | None]]) -> tuple[str, tuple[str, ...]]:
    """The state of a card from its signatures' (outcome, kid) pairs, and the kids that verified."""
    checks = list(checks)
    if not checks:
        return "unsigned", ()
    valid = tuple(dict.fromkeys(kid or "" for outcome, kid in checks if outcome == Outcome.VALID.value))
    if valid:
        return "verified", valid
    if all(outcome == Outcome.KEY_NOT_FOUND.value for outcome, _ in checks):
        return "unverifiable", ()
    return "invalid", ()


def result_pairs(checks: Iterable[SignatureResult]) -> list[tuple[str, str | None]]:
    return [(check.outcome.value, check.kid or check.key_thumbprint) for check in checks]


def _cut(value: str | None, limit: int) -> str | None:
    return value[:limit] if value is not None else None
