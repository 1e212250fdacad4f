"""The registration policies (`AGENTDEX_OWNERSHIP`), as the catalog's `RegistrationGate`:

- `open`: the catalog's `OpenGate` (whoever registers an agent owns it).
- `verified` (`VerifiedGate`): an agent's domain is the host of its card URL (`host:port` for plain
  http); the card URL and every interface URL of its card must lie in domains the actor has proven,
  unless the card is signed by a key from its own domain's JWKS, which proves that agent. Changes
  are the domain's: its proven owner (the entry's owner or not) or an admin; the entry's owner
  without the domain may still store a new card its domain signed.
- `review` (`ReviewGate`): anyone submits; an entry that is not proven as above waits as `pending`
  until an admin or the domain's proven owner approves it (`registry.ownership.review`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from registry.auth import Actor
from registry.catalog import (
    ACTIVE,
    PENDING,
    UNLISTED,
    VERSION,
    Agent,
    CardRecord,
    OpenGate,
    RegistrationGate,
    is_entry_owner,
)
from registry.errors import Forbidden
from registry.ownership.domains import DomainRegistry
from registry.ownership.domains_names import host_of_url
from signing import Outcome

JWKS_SOURCE = "jwks:"  # the key source of a key from a JWKS fetched by URL (jwksUrl or jku)


class NotDomainOwner(Forbidden):
    """The actor has not proven the domain an agent (or one of its interfaces) lies in."""

    code = "not_domain_owner"

    def __init__(self, domain: str) -> None:
        super().__init__(
            f"{domain} is not a domain you have proven: prove it with `agentdex domains add {domain}` and "
            f"`agentdex domains verify {domain}` (POST /v1/domains), or sign the card with a key from the "
            f"JWKS {domain} publishes",
            {"domain": domain, "prove": f"agentdex domains add {domain}"},
        )


def gate_for(policy: str, domains: DomainRegistry) -> RegistrationGate:
    """The gate of `policy` (`settings.ownership.policy`: open | verified | review)."""
    if policy == "verified":
        return VerifiedGate(domains)
    if policy == "review":
        return ReviewGate(domains)
    return OpenGate()


class DomainProof:
    """What an actor has proven about an agent: its domains, or its card's own signature."""

    def __init__(self, domains: DomainRegistry) -> None:
        self._domains = domains

    def domain_of(self, agent_or_url: Agent | str) -> str:
        url = agent_or_url if isinstance(agent_or_url, str) else agent_or_url.card_url
        return host_of_url(url) or url

    def holds(self, actor: Actor, url: str) -> bool:
        return self._domains.covers(actor.principal_id, url)

    def unproven(self, actor: Actor, record: CardRecord) -> str | None:
        """The first domain of the record's card URL and interfaces that `actor` has not proven
        (None: all are), unless its card is signed by its own domain's key."""
        if signed_by_own_domain(record):
            return None
        for domain in dict.fromkeys(self.domain_of(url) for url in card_urls(record.card_url, record.card)):
            if not self._domains.covers(actor.principal_id, domain):
                return domain
        return None


class _DomainGate:
    """What both domain policies share: who may read an entry in review, and the refusal of a card
    whose domains the actor has not proven."""

    def __init__(self, domains: DomainRegistry) -> None:
        self._proof = DomainProof(domains)

    def may_see(self, actor: Actor | None, agent: Agent) -> bool:
        return is_entry_owner(actor, agent) or (actor is not None and self._proof.holds(actor, agent.card_url))

    def _require_proven(self, actor: Actor, record: CardRecord) -> None:
        missing = None if actor.is_admin else self._proof.unproven(actor, record)
        if missing is not None:
            raise NotDomainOwner(missing)


class VerifiedGate(_DomainGate):
    """`verified`: the domain decides. Refusals are NotDomainOwner (403 `not_domain_owner`)."""

    def admit(self, actor: Actor, record: CardRecord) -> str:
        self._require_proven(actor, record)
        return ACTIVE

    def admit_change(self, actor: Actor, agent: Agent, change: str) -> None:
        if actor.is_admin or self._proof.holds(actor, agent.card_url):
            return
        if change == VERSION and agent.owner_id == actor.principal_id:
            return  # its new card may prove it (`admit_version`)
        raise NotDomainOwner(self._proof.domain_of(agent))

    def admit_version(self, actor: Actor, agent: Agent, record: CardRecord) -> None:
        self._require_proven(actor, record)

    def admit_manifest(self, actor: Actor, domain_url: str) -> None:
        if not (actor.is_admin or self._proof.holds(actor, domain_url)):
            raise NotDomainOwner(self._proof.domain_of(domain_url))


class ReviewGate(_DomainGate):
    """`review`: anyone submits; what is not proven waits as PENDING. An entry is changed by its
    owner, the domain's proven owner or an admin; a pushed card replaces a listed one only when
    proven (else a reviewed entry could be swapped for anything): publish it and refresh instead."""

    def admit(self, actor: Actor, record: CardRecord) -> str:
        return ACTIVE if actor.is_admin or self._proof.unproven(actor, record) is None else PENDING

    def admit_change(self, actor: Actor, agent: Agent, change: str) -> None:
        if not self.may_see(actor, agent):
            raise NotDomainOwner(self._proof.domain_of(agent))

    def admit_version(self, actor: Actor, agent: Agent, record: CardRecord) -> None:
        if agent.status in UNLISTED or record.source == "crawled":
            return  # what the card URL serves is the domain's own word
        self._require_proven(actor, record)

    def admit_manifest(self, actor: Actor, domain_url: str) -> None:
        return None  # what it lists waits for review like any submission


def card_urls(card_url: str, card: dict[str, Any]) -> Iterator[str]:
    """The card's URL and its interfaces' URLs: v1.0 `supportedInterfaces[].url`, 0.x `url` and
    `additionalInterfaces[].url`."""
    yield card_url
    if isinstance(card.get("url"), str):
        yield card["url"]
    for field in ("supportedInterfaces", "additionalInterfaces"):
        for interface in card.get(field) or ():
            if isinstance(interface, dict) and isinstance(interface.get("url"), str):
                yield interface["url"]


def signed_by_own_domain(record: CardRecord) -> bool:
    """Whether a valid signature of the card was verified with a key from a JWKS on the card's
    own domain (its `jwksUrl`, or a `jku` on its origin): the domain vouches for the card."""
    if record.trust is None:
        return False
    domain = host_of_url(record.card_url)
    return any(
        check.outcome == Outcome.VALID and _jwks_domain(check.key_source) == domain for check in record.trust.checks
    )


def _jwks_domain(key_source: str | None) -> str | None:
    if key_source is None or not key_source.startswith(JWKS_SOURCE):
        return None  # a pinned key, the owner's registered keys, the trust store: not the domain's word
    return host_of_url(key_source.removeprefix(JWKS_SOURCE))
