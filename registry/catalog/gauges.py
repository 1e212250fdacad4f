"""The catalog's scrape-time gauges: agents by status, health state and signature state, from one
GROUP BY over `agents` per scrape (computed by the process answering /metrics, from the database
every process shares, so the figures agree whichever process is scraped)."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import Engine, func, select

from registry.catalog.models import Agent
from registry.metrics import GaugeFamily, GaugeSource

_BY_STATE = select(Agent.status, Agent.health_state, Agent.signature_state, func.count()).group_by(
    Agent.status, Agent.health_state, Agent.signature_state
)


def agent_gauges(engine: Engine) -> GaugeSource:
    """The gauges over `engine` (use an autocommit engine: one statement)."""

    def gauges() -> list[GaugeFamily]:
        by_status: Counter[tuple[str, ...]] = Counter()
        by_health: Counter[tuple[str, ...]] = Counter()
        by_signature: Counter[tuple[str, ...]] = Counter()
        with engine.connect() as conn:
            for status, health, signature, count in conn.execute(_BY_STATE):
                by_status[(status,)] += count
                by_health[(health,)] += count
                by_signature[(signature,)] += count
        return [
            GaugeFamily("agentdex_agents", "Agents in the catalog, by status", ("status",), by_status),
            GaugeFamily("agentdex_agents_by_health", "Agents by health state", ("state",), by_health),
            GaugeFamily("agentdex_agents_by_signature", "Agents by signature state", ("state",), by_signature),
        ]

    return gauges
