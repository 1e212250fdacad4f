"""Review before listing (`AGENTDEX_OWNERSHIP=review`): an entry submitted by someone who has not
proven its domain waits as `pending`, in no search, page, manifest or find-agents answer, until an
admin or the domain's proven owner approves it, or rejects it with a reason the entry keeps (its
status message). Approving a rejected entry lists it too: a reviewer may change their mind.
The endpoints work under every policy, so entries left pending by an earlier `review` can be settled."""

from __future__ import annotations

from registry.auth import Actor
from registry.catalog import ACTIVE, PENDING, REJECTED, UNLISTED, Agent, CatalogModeration
from registry.errors import Conflict, InvalidRequest
from registry.ownership.domains import DomainRegistry
from registry.ownership.policy import DomainProof, NotDomainOwner

MAX_REASON = 1000  # agents.status_message


class ReviewDesk:
    def __init__(self, moderation: CatalogModeration, domains: DomainRegistry) -> None:
        self._moderation = moderation
        self._proof = DomainProof(domains)

    def approve(self, actor: Actor, agent_id: str) -> Agent:
        """List a pending (or rejected) entry. Raises NotFound, NotDomainOwner, Conflict (not in review)."""
        agent = self._reviewed(actor, agent_id)
        if agent.status not in UNLISTED:
            raise Conflict(f"agent {agent_id} is {agent.status}, not in review", {"status": agent.status})
        self._moderation.settle(actor, agent, ACTIVE, None, "agent.approve")
        return self._moderation.agent(agent_id)

    def reject(self, actor: Actor, agent_id: str, reason: str) -> Agent:
        """Refuse a pending entry; `reason` is kept as its status message. Raises InvalidRequest,
        NotFound, NotDomainOwner, Conflict (not pending)."""
        reason = reason.strip()
        if not reason or len(reason) > MAX_REASON:
            raise InvalidRequest(f"reason: say why the entry is rejected, in 1 to {MAX_REASON} characters")
        agent = self._reviewed(actor, agent_id)
        if agent.status != PENDING:
            raise Conflict(f"agent {agent_id} is {agent.status}, not pending review", {"status": agent.status})
        self._moderation.settle(actor, agent, REJECTED, reason, "agent.reject")
        return self._moderation.agent(agent_id)

    def _reviewed(self, actor: Actor, agent_id: str) -> Agent:
        """The agent, if `actor` reviews it: an admin, or the proven owner of its domain."""
        agent = self._moderation.agent(agent_id)
        if not (actor.is_admin or self._proof.holds(actor, agent.card_url)):
            raise NotDomainOwner(self._proof.domain_of(agent))
        return agent
