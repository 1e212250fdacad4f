"""What the catalog asks before a caller's write: may this actor list this card, change this agent,
read this unlisted entry? The catalog declares the question; who answers it is wired in
(`registry.container`): `OpenGate` is the registry without an ownership policy (whoever registers
an agent owns it), ownership's policies (`registry.ownership`) answer with proven domains.

The registry's own writes (the scheduled re-crawl, health, trust) never pass the gate: they
change no one's entry on anyone's behalf. A manifest crawl acts as the principal who registered the
domain, so its registrations and changes do.
"""

from __future__ import annotations

from typing import Protocol

from registry.auth import Actor
from registry.catalog.models import Agent
from registry.catalog.records import CardRecord
from registry.errors import Forbidden

ACTIVE, DEPRECATED = "active", "deprecated"
LISTED = (ACTIVE, DEPRECATED)  # what searches, pages and manifests show
PENDING = "pending"  # waits for review: an admin or the domain's proven owner approves it
REJECTED = "rejected"  # refused in review; its status message keeps the reason
UNLISTED = (PENDING, REJECTED)  # in no search, page, manifest or find-agents answer
# What a caller changes about an existing agent, as the gate is told: a new card version (pushed,
# or refreshed), its status (deprecate, reactivate), or its removal.
VERSION, STATUS, DELETE = "version", "status", "delete"


class RegistrationGate(Protocol):
    def admit(self, actor: Actor, record: CardRecord) -> str:
        """The status a new agent from `record` starts in (ACTIVE or PENDING). Raises Forbidden
        (or a subclass naming what is missing) to refuse it."""
        ...

    def admit_change(self, actor: Actor, agent: Agent, change: str) -> None:
        """Whether `actor` may make `change` (VERSION, STATUS or DELETE) to `agent` at all, asked
        before anything is fetched. Raises Forbidden."""
        ...

    def admit_version(self, actor: Actor, agent: Agent, record: CardRecord) -> None:
        """The new card version itself (pushed, or refreshed at the actor's request), once
        verified and before it is stored. Raises Forbidden."""
        ...

    def admit_manifest(self, actor: Actor, domain_url: str) -> None:
        """Whether `actor` may have the registry follow the ARD manifest of `domain_url` (its
        entries registered, changed and deprecated as theirs), asked before anything is fetched.
        Raises Forbidden."""
        ...

    def may_see(self, actor: Actor | None, agent: Agent) -> bool:
        """Whether `actor` (None: anonymous) may read an UNLISTED entry."""
        ...


class OpenGate:
    """No ownership policy: an agent is its registrant's, who (or an admin) may change it."""

    def admit(self, actor: Actor, record: CardRecord) -> str:
        return ACTIVE

    def admit_change(self, actor: Actor, agent: Agent, change: str) -> None:
        require_entry_owner(actor, agent)

    def admit_version(self, actor: Actor, agent: Agent, record: CardRecord) -> None:
        return None  # the owner may store any card that validates

    def admit_manifest(self, actor: Actor, domain_url: str) -> None:
        return None

    def may_see(self, actor: Actor | None, agent: Agent) -> bool:
        return is_entry_owner(actor, agent)


def is_entry_owner(actor: Actor | None, agent: Agent) -> bool:
    return actor is not None and (actor.is_admin or agent.owner_id == actor.principal_id)


def require_entry_owner(actor: Actor, agent: Agent) -> None:
    if not is_entry_owner(actor, agent):
        raise Forbidden("only the agent's owner or an admin may change it")
