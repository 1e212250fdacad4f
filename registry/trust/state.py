"""What verification found about one card, and writing it in the transaction that stores the
card version (so a version never exists without its checks and endorsement).

The roll-up of per-signature outcomes into one state:
- `unsigned`: the card has no signatures;
- `verified`: at least one signature is valid under the key policy (as the SDKs accept a card);
- `invalid`: none is valid and at least one is wrong: it does not match the card, is malformed,
  or uses an algorithm or key the policy refuses (`none`, HMAC, weak RSA);
- `unverifiable`: every signature is well-formed but no key could be resolved for it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from typing import Any, Protocol, cast

from sqlalchemy import Connection, TableClause, delete, insert, select, update

from registry.change_events import SIGNATURE_CHANGED, record_changes
from registry.trust.models import AGENT_TERMS, AGENTS, CardEndorsement, SignatureCheck
from signing import Outcome, SignatureResult

SIGNATURE_TERM = "sig"
# SQLAlchemy types a model's `__table__` as a FromClause.
CHECKS = cast(TableClause, SignatureCheck.__table__)
ENDORSEMENTS = cast(TableClause, CardEndorsement.__table__)


class Provenance(Protocol):
    """Where and when a card came from."""

    @property
    def card_url(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def fetched_from(self) -> str | None: ...

    @property
    def fetched_at(self) -> dt.datetime: ...


class CardSubject(Provenance, Protocol):
    """A card to verify (the catalog's `CardRecord`, or a stored version being re-verified)."""

    @property
    def card(self) -> dict[str, Any]: ...


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
        return {
            "signature_state": self.state,
            "signature_kids": list(self.kids),
            "signature_checked_at": self.checked_at,
        }

    def check_rows(self, agent_pk: int, card_version: int) -> list[dict[str, Any]]:
        return [
            {
                "agent_pk": agent_pk,
                "card_version": card_version,
                "position": check.index,
                "outcome": check.outcome.value,
                "kid": _cut(check.kid, 500),
                "alg": _cut(check.alg, 20),
                "key_source": _cut(check.key_source, 2100),
                "key_thumbprint": check.key_thumbprint,
                "form": check.form.value if check.form else None,
                "uncovered": list(check.uncovered),
                "detail": check.detail[:2000],
                "checked_at": self.checked_at,
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


def _cut(value: str | None, limit: int) -> str | None:
    return value[:limit] if value is not None else None


def trust_rows(items: list[tuple[CardTrust | None, int, int]]) -> dict[TableClause, list[dict[str, Any]]]:
    """The check and endorsement rows of new card versions, (trust, agent pk, version), by table."""
    return {
        CHECKS: [row for trust, pk, version in items if trust for row in trust.check_rows(pk, version)],
        ENDORSEMENTS: [row for trust, pk, version in items if trust for row in trust.endorsement_rows(pk, version)],
    }


def write_trust(conn: Connection, items: list[tuple[CardTrust | None, int, int]]) -> None:
    """Insert the checks and endorsements of card versions (`trust_rows`)."""
    for table, rows in trust_rows(items).items():
        if rows:
            conn.execute(insert(table), rows)


def replace_current_trust(conn: Connection, agent_pk: int, trust: CardTrust, version: int | None = None) -> None:
    """Replace the checks, endorsement, roll-up and search term of the agent's current card; with
    `version` (the one verified), nothing is written if another version became current meanwhile."""
    stored = conn.execute(
        select(AGENTS.c.card_version, AGENTS.c.signature_state).where(AGENTS.c.pk == agent_pk)
    ).first()
    if stored is None or version not in (None, stored.card_version):
        return
    current = stored.card_version
    for model in (SignatureCheck, CardEndorsement):
        conn.execute(delete(model).where(model.agent_pk == agent_pk, model.card_version == current))
    write_trust(conn, [(trust, agent_pk, current)])
    conn.execute(update(AGENTS).where(AGENTS.c.pk == agent_pk).values(**trust.agent_columns()))
    terms = AGENT_TERMS.c
    conn.execute(delete(AGENT_TERMS).where(terms.agent_pk == agent_pk, terms.kind == SIGNATURE_TERM))
    conn.execute(insert(AGENT_TERMS), [{"agent_pk": agent_pk, "kind": SIGNATURE_TERM, "value": trust.state}])
    if trust.state != stored.signature_state:  # the agent's row is held since the update above
        previous = {agent_pk: {"signature_previous": stored.signature_state}}
        record_changes(conn, SIGNATURE_CHANGED, previous, trust.checked_at)


def refresh_current_trust(conn: Connection, agent_pk: int, trust: CardTrust | None, version: int | None = None) -> None:
    """`replace_current_trust` when the roll-up differs from the stored one (a re-crawl found the
    card unchanged, but its keys now resolve, or no longer do)."""
    if trust is None:
        return
    stored = conn.execute(
        select(AGENTS.c.signature_state, AGENTS.c.signature_kids).where(AGENTS.c.pk == agent_pk)
    ).first()
    if stored is not None and (stored.signature_state, stored.signature_kids or []) != (trust.state, list(trust.kids)):
        replace_current_trust(conn, agent_pk, trust, version)
