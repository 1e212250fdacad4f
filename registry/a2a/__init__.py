"""Agentdex as an A2A agent: orchestrators that speak A2A find agents (and verify cards, and
register agents) by sending the registry a message, over the interfaces its own Agent Card lists
(`registry.api.registry_card`). An application-layer package beside `registry.api`, on the
domains' faces: the search, validation and trust answers are the REST API's own.
"""

from sqlalchemy import Engine

from registry.a2a.agent import RegistryAgent, Skill
from registry.a2a.api import JSONRPC_PATH, REST_PATH, bp
from registry.a2a.find_agents import FindAgents
from registry.a2a.messages import INPUT_MODES, OUTPUT_MODES
from registry.a2a.models import A2ATask
from registry.a2a.register_agent import RegisterAgent
from registry.a2a.skills import FIND_AGENTS, REGISTER_AGENT, SKILLS, TOKEN_SCHEME, VERIFY_CARD, WRITE_SCOPE
from registry.a2a.tasks import TaskStore
from registry.a2a.verify_card import VerifyCard
from registry.catalog import CardFetcher, CatalogSearch, CatalogService
from registry.trust import TrustService
from registry.validation import CardLimits


def registry_agent(
    engine: Engine,
    search: CatalogSearch,
    catalog: CatalogService,
    fetcher: CardFetcher,
    trust: TrustService,
    limits: CardLimits,
    *,
    max_limit: int,
) -> RegistryAgent:
    """The agent and its skills, on the registry's services (`max_limit`: the largest page)."""
    skills: dict[str, Skill] = {
        FIND_AGENTS: FindAgents(search, max_limit=max_limit),
        VERIFY_CARD: VerifyCard(fetcher, trust, limits),
        REGISTER_AGENT: RegisterAgent(catalog),
    }
    return RegistryAgent(skills, TaskStore(engine))


__all__ = [
    "INPUT_MODES",
    "JSONRPC_PATH",
    "OUTPUT_MODES",
    "REST_PATH",
    "SKILLS",
    "TOKEN_SCHEME",
    "WRITE_SCOPE",
    "A2ATask",
    "RegistryAgent",
    "TaskStore",
    "bp",
    "registry_agent",
]
