"""Claiming a listing: the proven owner of an agent's domain takes its entry, whoever registered it.
Nothing else about the entry changes; the audit row (in the same transaction) names the previous
and the new owner, and an `io.agentdex.agent.updated` event says `change: "owner"`: that is how
the previous owner learns it (`GET /v1/audit?agent=ID`, or their event subscription)."""

from __future__ import annotations

from registry.auth import Actor
from registry.catalog import CatalogModeration
from registry.ownership.domains import DomainRegistry
from registry.ownership.policy import DomainProof, NotDomainOwner


class Claims:
    def __init__(self, moderation: CatalogModeration, domains: DomainRegistry) -> None:
        self._moderation = moderation
        self._proof = DomainProof(domains)

    def claim(self, actor: Actor, agent_id: str) -> bool:
        """Make `actor` the entry's owner; False when it is theirs already. Raises NotFound,
        NotDomainOwner (admins too: a claim is the domain's, an admin changes entries without one)."""
        agent = self._moderation.agent(agent_id)
        actor.require_domain_of(agent.card_url)
        if not self._proof.holds(actor, agent.card_url):
            raise NotDomainOwner(self._proof.domain_of(agent))
        return self._moderation.hand_over(actor, agent, actor.principal_id, "agent.claim")
