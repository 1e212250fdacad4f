"""What `agentdex search reindex` reads and writes (`registry.catalog.reindex`), mixed into
`CatalogStore`: the agents' current cards, their search index rows written again, and the host term
of agents stored before the catalog kept one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from sqlalchemy import Connection, Engine, exists, select

from registry.catalog.models import Agent, AgentCard, AgentEmbedding, AgentTerm
from registry.catalog.records import MAX_TERM, host_of
from registry.catalog.search_index import SearchIndex, TableRows
from registry.validation import CardSummary

_AGENTS = Agent.__table__
_TERMS = AgentTerm.__table__


class ReindexStore:
    """`CatalogStore` provides the engines, the index and how rows are written."""

    engine: Engine
    index: SearchIndex
    _reads: Engine
    writing: Callable[[], AbstractContextManager[object]]
    insert_tables: Callable[[Connection, TableRows], None]

    def current_cards(self, after: int, limit: int, missing_model: str | None = None) -> list[tuple[int, bytes]]:
        """(pk, raw current card) of up to `limit` agents after pk `after`, in pk order; with
        `missing_model`, only agents without an embedding of that model."""
        statement = (
            select(Agent.pk, AgentCard.raw)
            .join(AgentCard, (AgentCard.agent_pk == Agent.pk) & AgentCard.is_current.is_(True))
            .where(Agent.pk > after)
            .order_by(Agent.pk)
            .limit(limit)
        )
        if missing_model is not None:
            embedded = select(AgentEmbedding.agent_pk).where(
                AgentEmbedding.agent_pk == Agent.pk, AgentEmbedding.model == missing_model
            )
            statement = statement.where(~embedded.exists())
        with self._reads.connect() as conn:
            return [(pk, bytes(raw)) for pk, raw in conn.execute(statement)]

    def reindex(self, agents: Sequence[tuple[int, CardSummary]]) -> None:
        """Write the search index rows of agents again, from their summaries."""
        entries = self.index.prepare([summary for _, summary in agents])
        with self.writing(), self.engine.begin() as conn:
            for pk, _ in agents:
                self.index.remove(conn, pk)
            self.insert_tables(conn, self.index.rows(conn, [(pk, e) for (pk, _), e in zip(agents, entries)]))

    def add_missing_hosts(self, after: int, limit: int) -> tuple[int, int | None]:
        """Give up to `limit` agents after pk `after` that have no host term theirs, from their card
        URL; (how many were given one, the last pk looked at: None when none was left)."""
        hostless = (
            select(_AGENTS.c.pk, _AGENTS.c.card_url)
            .where(_AGENTS.c.pk > after, ~exists().where(_TERMS.c.agent_pk == _AGENTS.c.pk, _TERMS.c.kind == "host"))
            .order_by(_AGENTS.c.pk)
            .limit(limit)
            .with_for_update(of=_AGENTS)  # PostgreSQL: a new card written meanwhile waits (SQLite: one writer)
        )
        with self.writing(), self.engine.begin() as conn:
            agents = conn.execute(hostless).all()
            hosts = [(pk, host_of(url)) for pk, url in agents]
            rows = [{"agent_pk": pk, "kind": "host", "value": host[:MAX_TERM]} for pk, host in hosts if host]
            self.insert_tables(conn, {_TERMS: rows})
        return len(rows), agents[-1].pk if agents else None
