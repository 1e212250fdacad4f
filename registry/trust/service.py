"""Verifying every card version the catalog stores, and re-verifying current cards when the keys
that may verify them change.

`assess` runs before the catalog's transaction (JWKS fetches are network I/O); what it returns
travels with the card (`CardRecord.trust`) and is written in the same transaction as the card
version (`registry.trust.rows`). An invalid or unverifiable signature does not stop a card, unless the
operator requires valid signatures (`AGENTDEX_REQUIRE_SIGNATURES`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from typing import Any, Protocol

from sqlalchemy import Engine, select, update

from registry.auth import Actor
from registry.db.types import utcnow
from registry.errors import Forbidden, NotFound
from registry.trust.catalog_tables import AGENT_CARDS, AGENTS
from registry.trust.endorse import Endorser, attestation
from registry.trust.errors import SignatureRequired
from registry.trust.keys import KeyHolder, KeyPolicy, KeyScope, OwnedAgent, OwnerKeys, TrustedKeyInfo
from registry.trust.rows import replace_current_trust
from registry.trust.state import CardTrust, result_pairs, roll_up
from signing import CardPayloads, SigningError, verify_card

REVERIFY_BATCH = 100


class CardSubject(Protocol):
    """A card with its provenance (a `CardRecord`, or a stored version being re-verified)."""

    @property
    def card(self) -> dict[str, Any]: ...

    @property
    def card_url(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def fetched_from(self) -> str | None: ...

    @property
    def fetched_at(self) -> dt.datetime: ...


class CatalogTrust(Protocol):
    """What the catalog asks of trust: a `TrustService`, or `NoTrust` when verification is off."""

    def new_scope(self, actor: Actor, jwks_url: str | None) -> KeyScope | None: ...

    def scope_of(self, agent: KeyHolder) -> KeyScope | None: ...

    def scope_of_url(self, card_url: str) -> KeyScope | None: ...

    def assess(self, subject: CardSubject, scope: KeyScope, *, endorse: bool = True) -> CardTrust | None: ...

    def require(self, trust: CardTrust) -> None: ...

    def assess_current(self, agent_pk: int) -> tuple[int, CardTrust] | None: ...


class _StoredCard:
    def __init__(self, row: Any) -> None:
        self.agent_pk: int = row.agent_pk
        self.version: int = row.card_version
        self.card = json.loads(row.raw)
        self.card_url, self.source, self.fetched_from, self.fetched_at = row.card_url, row.source, row.fetched_from, row.fetched_at
        self.scope = KeyScope(row.owner_id, row.agent_pk, row.jwks_url)


class TrustService:
    def __init__(self, engine: Engine, policy: KeyPolicy, owner_keys: OwnerKeys, endorser: Endorser, *,
                 require_signatures: bool, clock: Callable[[], dt.datetime] = utcnow) -> None:
        self._engine = engine
        self._policy = policy
        self.owner_keys = owner_keys
        self.endorser = endorser
        self._require = require_signatures
        self._clock = clock

    # -- card versions ---------------------------------------------------------------------

    def assess(self, subject: CardSubject, scope: KeyScope, *, endorse: bool = True) -> CardTrust:
        """Verify every signature (A2A §8.4.3) and, for a card that validated, endorse it."""
        now = self._clock()
        payloads = CardPayloads(subject.card)  # one canonical form for verifying and endorsing
        try:
            result = verify_card(subject.card, self._policy.resolver(subject.card_url, scope), payloads=payloads)
        except SigningError as error:  # `signatures` is not a list: only on cards that did not validate
            return CardTrust("invalid", (), now, reason=str(error), accepted=not self._require)
        state, kids = roll_up(result_pairs(result.signatures))
        accepted = not self._require or state == "verified"
        trust = CardTrust(state, kids, now, result.signatures, result.reason, accepted)
        if endorse and accepted:
            return dataclasses.replace(trust, endorsement=self._endorse_now(subject, trust, payloads))
        return trust

    def require(self, trust: CardTrust) -> None:
        """Raises SignatureRequired when the operator requires a valid signature and there is none."""
        if not trust.accepted:
            raise SignatureRequired(
                f"this registry only accepts cards with a valid signature; this card's is {trust.state}",
                {"signature": {"state": trust.state, "reason": trust.reason,
                               "signatures": [check.to_dict() for check in trust.checks]}},
            )

    def _endorse_now(self, subject: CardSubject, trust: CardTrust, payloads: CardPayloads) -> dict[str, Any] | None:
        base = self.endorser.public_url
        if base is None:  # jku needs the public URL: endorse on read instead
            return None
        claims = attestation(
            registry=base, card_url=subject.card_url, source=subject.source, fetched_from=subject.fetched_from,
            fetched_at=subject.fetched_at, state=trust.state, kids=trust.kids, checked_at=trust.checked_at,
        )
        return self.endorser.endorse(subject.card, claims, base, payloads)

    # -- scopes ----------------------------------------------------------------------------

    def new_scope(self, actor: Actor, jwks_url: str | None) -> KeyScope:
        """The scope of an agent being registered. Raises InvalidRequest for a refused jwksUrl."""
        return KeyScope(actor.principal_id, None, self._policy.check_jwks_url(jwks_url) if jwks_url else None)

    @staticmethod
    def scope_of(agent: KeyHolder) -> KeyScope:
        return KeyScope(agent.owner_id, agent.pk, agent.jwks_url)

    def scope_of_url(self, card_url: str) -> KeyScope:
        agents = AGENTS.c
        with self._engine.connect() as conn:
            row = conn.execute(select(agents.owner_id, agents.pk, agents.jwks_url).where(agents.card_url == card_url)).first()
        return KeyScope(*row) if row else KeyScope(None)

    # -- keys owners register, and what they change ----------------------------------------

    def register_keys(self, actor: Actor, document: object, agent_id: str | None) -> TrustedKeyInfo:
        """Register a JWKS for all the actor's agents (or one), then re-verify the cards it covers."""
        agent = self._owned(actor, agent_id) if agent_id else None
        info = self.owner_keys.add(actor, document, agent)
        self.reverify_owned(agent.owner_id if agent else actor.principal_id, agent.pk if agent else None)
        return info

    def remove_keys(self, actor: Actor, key_id: str) -> None:
        removed = self.owner_keys.remove(actor, key_id)
        self.reverify_owned(removed.principal_id, removed.agent_pk)

    def set_jwks_url(self, actor: Actor, agent_id: str, url: str | None) -> None:
        """Set (or clear) the agent's own JWKS URL, then re-verify its current card."""
        agent = self._owned(actor, agent_id)
        checked = self._policy.check_jwks_url(url) if url else None
        with self._engine.begin() as conn:
            conn.execute(update(AGENTS).where(AGENTS.c.pk == agent.pk).values(jwks_url=checked, updated_at=self._clock()))
        self.reverify([agent.pk])

    def reverify_owned(self, owner_id: int | None, agent_pk: int | None) -> int:
        """Re-verify the current cards of an owner's agents (or one of them). Returns how many."""
        agents = AGENTS.c
        where = agents.pk == agent_pk if agent_pk is not None else agents.owner_id == owner_id
        with self._engine.connect() as conn:
            pks = list(conn.scalars(select(agents.pk).where(where).order_by(agents.pk)))
        for start in range(0, len(pks), REVERIFY_BATCH):
            self.reverify(pks[start : start + REVERIFY_BATCH])
        return len(pks)

    def reverify(self, agent_pks: list[int]) -> None:
        """Verify the current cards again (outside any transaction), then store the results."""
        stored = self._current_cards(agent_pks)
        results = [(card.agent_pk, card.version, self.assess(card, card.scope)) for card in stored]
        with self._engine.begin() as conn:
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
            select(cards.agent_pk, cards.raw, cards.source, cards.fetched_from, cards.fetched_at,
                   agents.card_url, agents.owner_id, agents.jwks_url, agents.card_version)
            .join(AGENTS, agents.pk == cards.agent_pk)
            .where(cards.agent_pk.in_(agent_pks), cards.version == agents.card_version)
        )
        with self._engine.connect() as conn:
            return [_StoredCard(row) for row in conn.execute(stmt)]

    def _owned(self, actor: Actor, agent_id: str | None) -> OwnedAgent:
        agents = AGENTS.c
        with self._engine.connect() as conn:
            row = conn.execute(select(agents.pk, agents.id, agents.owner_id, agents.jwks_url).where(agents.id == agent_id)).first()
        if row is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        if not actor.is_admin and row.owner_id != actor.principal_id:
            raise Forbidden("only the agent's owner or an admin may change its keys")
        return OwnedAgent(row.pk, row.id, row.owner_id, row.jwks_url)


class NoTrust:
    """Trust switched off (a catalog built without verification): cards carry no checks, so no
    scope is ever made and nothing is assessed or required."""

    def new_scope(self, actor: Actor, jwks_url: str | None) -> KeyScope | None:
        return None

    def scope_of(self, agent: KeyHolder) -> KeyScope | None:
        return None

    def scope_of_url(self, card_url: str) -> KeyScope | None:
        return None

    def assess(self, subject: CardSubject, scope: KeyScope | None, *, endorse: bool = True) -> CardTrust | None:
        return None

    def require(self, trust: CardTrust | None) -> None:
        return None

    def assess_current(self, agent_pk: int) -> tuple[int, CardTrust] | None:
        return None

