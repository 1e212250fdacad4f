"""Reading trust: a card version with the registry's endorsement appended, and the per-signature
report of a version."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine, select

from registry.errors import NotFound
from registry.trust.catalog_tables import AGENT_CARDS, AGENTS
from registry.trust.endorse import Endorser, attestation, iso
from registry.trust.models import CardEndorsement, SignatureCheck
from registry.trust.state import roll_up


class TrustReads:
    def __init__(self, engine: Engine, endorser: Endorser, *, require_signatures: bool) -> None:
        """`engine` runs each read as one statement (`registry.db.single_statements`)."""
        self._engine = engine
        self._endorser = endorser
        self._require = require_signatures

    def endorsed_card(self, agent_id: str, version: int | None, request_base: str) -> bytes:
        """The card (current or `version`) with the registry's signature appended.

        Raises NotFound (no such agent or version, or a version the registry does not endorse).
        """
        row, checks, stored = self._version(agent_id, version)
        card = json.loads(row.raw)
        state, kids = _state(checks, card)
        if not row.valid or (self._require and state != "verified"):
            raise NotFound(f"version {row.version} of agent {agent_id} is not endorsed: it did not pass the registry's checks")
        base = self._endorser.base_url(request_base) or request_base
        if self._endorser.is_current(stored, base):
            entry = stored["entry"]  # type: ignore[index]
        else:
            checked_at = max((check.checked_at for check in checks), default=row.fetched_at)
            claims = attestation(registry=base, card_url=row.card_url, source=row.source, fetched_from=row.fetched_from,
                                 fetched_at=row.fetched_at, state=state, kids=kids, checked_at=checked_at)
            entry = self._endorser.cached((row.agent_pk, row.version, checked_at), card, claims, base)["entry"]
        card["signatures"] = [*(card.get("signatures") or []), entry]
        return json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def report(self, agent_id: str, version: int | None) -> dict[str, Any]:
        """What verification found for a version: the roll-up and every signature's outcome."""
        row, checks, _ = self._version(agent_id, version)
        state, kids = _state(checks, json.loads(row.raw))
        return {
            "agentId": agent_id, "version": row.version, "state": state, "kids": list(kids),
            "checkedAt": iso(max((c.checked_at for c in checks), default=None)),
            "signatures": [_check_json(check) for check in checks],
        }

    def _version(self, agent_id: str, version: int | None) -> tuple[Any, list[Any], dict[str, Any] | None]:
        cards = AGENT_CARDS.c
        card = (
            select(cards.agent_pk, cards.version, cards.raw, cards.valid, cards.source, cards.fetched_from,
                   cards.fetched_at, AGENTS.c.card_url)
            .join(AGENTS, AGENTS.c.pk == cards.agent_pk).where(AGENTS.c.id == agent_id)
        )
        card = card.where(cards.version == version) if version else card.where(cards.is_current.is_(True))
        with self._engine.connect() as conn:
            row = conn.execute(card).first()
            if row is None:
                raise NotFound(f"no card {'version ' + str(version) + ' ' if version else ''}for agent {agent_id!r}")
            key = (row.agent_pk, row.version)
            checks = list(conn.execute(
                select(SignatureCheck).where(SignatureCheck.agent_pk == key[0], SignatureCheck.card_version == key[1])
                .order_by(SignatureCheck.position)
            ))
            stored = conn.execute(
                select(CardEndorsement.kid, CardEndorsement.jku, CardEndorsement.entry)
                .where(CardEndorsement.agent_pk == key[0], CardEndorsement.card_version == key[1])
            ).first()
        return row, checks, (stored._asdict() if stored else None)


def _state(checks: list[Any], card: Any) -> tuple[str, tuple[str, ...]]:
    if not checks and isinstance(card, dict) and card.get("signatures"):
        return "unverifiable", ()  # stored before verification existed: never checked
    return roll_up((check.outcome, check.kid or check.key_thumbprint) for check in checks)


def _check_json(check: Any) -> dict[str, Any]:
    return {
        "index": check.position, "outcome": check.outcome, "kid": check.kid, "alg": check.alg,
        "keySource": check.key_source, "keyThumbprint": check.key_thumbprint, "form": check.form,
        "uncovered": check.uncovered, "detail": check.detail,
    }
