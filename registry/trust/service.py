"""Verifying every card version the catalog stores (before its transaction: JWKS fetches are
network I/O), re-verifying current cards when their keys change, and reading what was found. A
bad signature stops a card only when the operator requires valid ones (`AGENTDEX_REQUIRE_SIGNATURES`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Engine, select, update

from registry.auth import Actor
from registry.db.types import utcnow
from registry.errors import Forbidden, NotFound
from registry.trust.errors import SignatureRequired
from registry.trust.keys import KeyHolder, KeyPolicy, KeyScope, OwnerKeys
from registry.trust.models import AGENT_CARDS, AGENTS, CardEndorsement, SignatureCheck, TrustedKey, iso
from registry.trust.registry_keys import Endorser, attestation
from registry.trust.state import CardSubject, CardTrust, replace_current_trust, roll_up
from signing import CardPayloads, ChainResolver, SigningError, verify_card

REVERIFY_BATCH = 100


class _StoredCard:
    """A current card version read back for re-verification (a `CardSubject`)."""

    def __init__(self, row: Any) -> None:
        self.agent_pk: int = row.agent_pk
        self.version: int = row.card_version
        self.card = json.loads(row.raw)
        self.card_url, self.source = row.card_url, row.source
        self.fetched_from, self.fetched_at = row.fetched_from, row.fetched_at
        self.scope = KeyScope(row.owner_id, row.agent_pk, row.jwks_url)


class TrustService:
    def __init__(
        self,
        engine: Engine,
        policy: KeyPolicy,
        owner_keys: OwnerKeys,
        endorser: Endorser,
        *,
        require_signatures: bool,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._engine = engine
        self._policy = policy
        self.owner_keys = owner_keys
        self.endorser = endorser
        self._require = require_signatures
        self._clock = clock

    def assess(self, subject: CardSubject, scope: KeyScope, *, endorse: bool = True) -> CardTrust:
        """Verify every signature (A2A §8.4.3) and, for a card that validated, endorse it."""
        now = self._clock()
        payloads = CardPayloads(subject.card)  # one canonical form for verifying and endorsing
        try:
            # Keys are resolved only for a card that has signatures: most cards have none.
            signed = bool(subject.card.get("signatures"))
            resolver = self._policy.resolver(subject.card_url, scope) if signed else ChainResolver([])
            result = verify_card(subject.card, resolver, payloads=payloads)
        except SigningError as error:  # `signatures` is not a list: only on cards that did not validate
            return CardTrust("invalid", (), now, reason=str(error), accepted=not self._require)
        state, kids = roll_up((check.outcome.value, check.kid or check.key_thumbprint) for check in result.signatures)
        accepted = not self._require or state == "verified"
        trust = CardTrust(state, kids, now, result.signatures, result.reason, accepted)
        base = self.endorser.public_url
        if not (endorse and accepted and base):  # without the public URL (for `jku`), endorse on read
            return trust
        claims = attestation(base, subject, trust.state, trust.kids, trust.checked_at)
        return dataclasses.replace(trust, endorsement=self.endorser.endorse(subject.card, claims, base, payloads))

    def require(self, trust: CardTrust | None) -> None:
        """Raises SignatureRequired when the operator requires a valid signature and there is none."""
        if trust is not None and not trust.accepted:
            checks = [check.to_dict() for check in trust.checks]
            detail = {"signature": {"state": trust.state, "reason": trust.reason, "signatures": checks}}
            raise SignatureRequired(
                f"this registry only accepts cards with a valid signature; this card's is {trust.state}", detail
            )

    def new_scope(self, actor: Actor, jwks_url: str | None) -> KeyScope:
        """The scope of an agent being registered. Raises InvalidRequest for a refused jwksUrl."""
        return KeyScope(actor.principal_id, None, self._policy.check_jwks_url(jwks_url) if jwks_url else None)

    @staticmethod
    def scope_of(agent: KeyHolder) -> KeyScope:
        return KeyScope(agent.owner_id, agent.pk, agent.jwks_url)

    def scope_of_url(self, card_url: str) -> KeyScope:
        return self._scope(AGENTS.c.card_url == card_url) or KeyScope(None)

    def register_keys(self, actor: Actor, document: object, agent_id: str | None) -> TrustedKey:
        """Register a JWKS for all the actor's agents (or one), then re-verify the cards it covers."""
        key = self.owner_keys.add(actor, document, self._owned(actor, agent_id) if agent_id else None)
        self.reverify_owned(key.principal_id, key.agent_pk)
        return key

    def remove_keys(self, actor: Actor, key_id: str) -> None:
        removed = self.owner_keys.remove(actor, key_id)
        self.reverify_owned(removed.principal_id, removed.agent_pk)

    def set_jwks_url(self, actor: Actor, agent_id: str, url: str | None) -> None:
        """Set (or clear) the agent's own JWKS URL, then re-verify its current card."""
        scope = self._owned(actor, agent_id)
        checked = self._policy.check_jwks_url(url) if url else None
        with self._engine.begin() as conn:
            agent = update(AGENTS).where(AGENTS.c.pk == scope.agent_pk)
            conn.execute(agent.values(jwks_url=checked, updated_at=self._clock()))
        self.reverify_owned(scope.owner_id, scope.agent_pk)

    def reverify_owned(self, owner_id: int | None, agent_pk: int | None) -> None:
        """Re-verify the current cards of an owner's agents (or of one agent), a batch at a time."""
        agents = AGENTS.c
        where = agents.pk == agent_pk if agent_pk is not None else agents.owner_id == owner_id
        with self._engine.connect() as conn:
            pks = list(conn.scalars(select(agents.pk).where(where).order_by(agents.pk)))
        for start in range(0, len(pks), REVERIFY_BATCH):
            stored = self._current_cards(pks[start : start + REVERIFY_BATCH])
            results = [(card.agent_pk, card.version, self.assess(card, card.scope)) for card in stored]
            with self._engine.begin() as conn:  # verified above, outside any transaction
                for agent_pk, version, trust in results:
                    replace_current_trust(conn, agent_pk, trust, version)

    def assess_current(self, agent_pk: int) -> tuple[int, CardTrust] | None:
        """Verify the agent's current card again (outside any transaction): (its version, the
        result), for a caller that stores it only if that version is still current. None if the
        agent is gone."""
        stored = self._current_cards([agent_pk])
        return (stored[0].version, self.assess(stored[0], stored[0].scope)) if stored else None

    def _current_cards(self, agent_pks: list[int]) -> list[_StoredCard]:
        cards, agents = AGENT_CARDS.c, AGENTS.c
        stmt = (
            select(AGENT_CARDS, agents.card_url, agents.owner_id, agents.jwks_url, agents.card_version)
            .join(AGENTS, agents.pk == cards.agent_pk)
            .where(cards.agent_pk.in_(agent_pks), cards.version == agents.card_version)
        )
        with self._engine.connect() as conn:
            return [_StoredCard(row) for row in conn.execute(stmt)]

    def _scope(self, where: ColumnElement[bool]) -> KeyScope | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(AGENTS.c.owner_id, AGENTS.c.pk, AGENTS.c.jwks_url).where(where)).first()
        return KeyScope(*row) if row else None

    def _owned(self, actor: Actor, agent_id: str | None) -> KeyScope:
        """The scope of an agent the actor may change the keys of. Raises NotFound, Forbidden."""
        scope = self._scope(AGENTS.c.id == agent_id)
        if scope is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        if not actor.is_admin and scope.owner_id != actor.principal_id:
            raise Forbidden("only the agent's owner or an admin may change its keys")
        return scope


class NoTrust:
    """Trust switched off (a catalog built without verification): no scope is ever made, so
    nothing is assessed or required."""

    def new_scope(self, actor: Actor, jwks_url: str | None) -> None:
        return None

    def scope_of(self, agent: KeyHolder) -> None:
        return None

    def scope_of_url(self, card_url: str) -> None:
        return None

    def assess(self, subject: CardSubject, scope: KeyScope | None, *, endorse: bool = True) -> None:
        return None

    def require(self, trust: CardTrust | None) -> None:
        return None

    def assess_current(self, agent_pk: int) -> None:
        return None


CatalogTrust = TrustService | NoTrust  # what the catalog asks of trust


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
            raise NotFound(
                f"version {row.version} of agent {agent_id} is not endorsed: it did not pass the registry's checks"
            )
        base = self._endorser.base_url(request_base) or request_base
        if stored is not None and self._endorser.is_current(stored, base):
            entry = stored["entry"]
        else:
            checked_at = max((check.checked_at for check in checks), default=row.fetched_at)
            claims = attestation(base, row, state, kids, checked_at)
            entry = self._endorser.endorse(card, claims, base)["entry"]
        card["signatures"] = [*(card.get("signatures") or []), entry]
        return json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def report(self, agent_id: str, version: int | None) -> dict[str, Any]:
        """What verification found for a version: the roll-up and every signature's outcome."""
        row, checks, _ = self._version(agent_id, version)
        state, kids = _state(checks, json.loads(row.raw))
        return {
            "agentId": agent_id,
            "version": row.version,
            "state": state,
            "kids": list(kids),
            "checkedAt": iso(max((c.checked_at for c in checks), default=None)),
            "signatures": [
                {
                    "index": check.position,
                    "outcome": check.outcome,
                    "kid": check.kid,
                    "alg": check.alg,
                    "keySource": check.key_source,
                    "keyThumbprint": check.key_thumbprint,
                    "form": check.form,
                    "uncovered": check.uncovered,
                    "detail": check.detail,
                }
                for check in checks
            ],
        }

    def _version(self, agent_id: str, version: int | None) -> tuple[Any, list[Any], dict[str, Any] | None]:
        cards = AGENT_CARDS.c
        card = (
            select(AGENT_CARDS, AGENTS.c.card_url)
            .join(AGENTS, AGENTS.c.pk == cards.agent_pk)
            .where(AGENTS.c.id == agent_id, (cards.version == version) if version else cards.is_current.is_(True))
        )
        with self._engine.connect() as conn:
            row = conn.execute(card).first()
            if row is None:
                raise NotFound(f"no card {'version ' + str(version) + ' ' if version else ''}for agent {agent_id!r}")
            of_version = (SignatureCheck.agent_pk == row.agent_pk, SignatureCheck.card_version == row.version)
            checks = list(conn.execute(select(SignatureCheck).where(*of_version).order_by(SignatureCheck.position)))
            endorsement = (CardEndorsement.agent_pk == row.agent_pk, CardEndorsement.card_version == row.version)
            stored = conn.execute(
                select(CardEndorsement.kid, CardEndorsement.jku, CardEndorsement.entry).where(*endorsement)
            ).first()
        return row, checks, (stored._asdict() if stored else None)


def _state(checks: list[Any], card: Any) -> tuple[str, tuple[str, ...]]:
    if not checks and isinstance(card, dict) and card.get("signatures"):
        return "unverifiable", ()  # stored before verification existed: never checked
    return roll_up((check.outcome, check.kid or check.key_thumbprint) for check in checks)
