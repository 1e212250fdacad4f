"""The registration policy wired from `settings.ownership.policy`: the gate the catalog asks, and
the review desk and claims that act on entries for the domain's owner."""

from __future__ import annotations

import dataclasses

from sqlalchemy.orm import Session, sessionmaker

from registry.catalog import CatalogModeration, CatalogStore, RegistrationGate
from registry.ownership.claims import Claims
from registry.ownership.domains import DomainRegistry
from registry.ownership.policy import gate_for
from registry.ownership.review import ReviewDesk


@dataclasses.dataclass(frozen=True)
class AgentPolicy:
    gate: RegistrationGate  # handed to `CatalogService(gate=...)`
    review: ReviewDesk
    claims: Claims


def build_agent_policy(policy: str, sessions: sessionmaker[Session], store: CatalogStore) -> AgentPolicy:
    """`policy`: open | verified | review. Proven domains are read from the database at each
    question (`DomainRegistry`), so a proof or a lapse in any process counts at once."""
    domains = DomainRegistry(sessions)
    moderation = CatalogModeration(store)
    return AgentPolicy(gate_for(policy, domains), ReviewDesk(moderation, domains), Claims(moderation, domains))
