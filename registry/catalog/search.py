"""Reading the catalog: search with cursor pagination, one agent, its cards, its history, tags."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Row, bindparam, select
from sqlalchemy.orm import Session, sessionmaker

from registry.db import generic_plans, make_session_factory, separate_reads, single_statements
from registry.errors import InvalidRequest, NotFound
from registry.schema import Agent, AgentCard
from registry.db.types import utcnow
from registry.catalog.agent_view import live_json
from registry.catalog.index import MAX_TERM, normalize_mode, normalize_tag
from registry.catalog.drift import card_drift
from registry.catalog.search_plan import SearchFilters, SearchPlanner, TermStats
from registry.catalog.tag_counts import TagCounts
from registry.catalog.text_index import TextIndex

CAPABILITIES = ("streaming", "pushNotifications", "extendedAgentCard")
STATUS_FILTERS = ("active", "deprecated", "any")
HEALTH_FILTERS = ("up", "degraded", "down", "unknown")
SIGNATURE_FILTERS = ("verified", "invalid", "unverifiable", "unsigned")
MAX_SEARCH_TAGS = 32


@dataclasses.dataclass(frozen=True)
class AgentQuery:
    """A catalog search. Every filter narrows the result; tags match all unless `match_any`."""

    tags: tuple[str, ...] = ()
    match_any: bool = False
    text: str | None = None
    skill: str | None = None
    input_mode: str | None = None
    output_mode: str | None = None
    capabilities: tuple[str, ...] = ()
    protocol_version: str | None = None
    status: str = "active"
    updated_since: dt.datetime | None = None
    health: str | None = None
    include_dead: bool = False
    signature: str | None = None
    limit: int = 50
    cursor: str | None = None

    def required_terms(self) -> list[tuple[str, str]]:
        terms = [] if self.match_any else [("tag", normalize_tag(t)) for t in self.tags]
        if self.skill:
            terms.append(("skill", self.skill))
        if self.input_mode:
            terms.append(("input", normalize_mode(self.input_mode)))
        if self.output_mode:
            terms.append(("output", normalize_mode(self.output_mode)))
        terms.extend(("cap", c) for c in self.capabilities)
        if self.protocol_version:
            terms.append(("proto", self.protocol_version.strip()))
        if self.signature:
            terms.append(("sig", self.signature))
        return list(dict.fromkeys((kind, value[:MAX_TERM]) for kind, value in terms))  # as indexed


@dataclasses.dataclass(frozen=True)
class AgentPage:
    agents: list[Row[Any]]
    next_cursor: str | None


def encode_cursor(pk: int) -> str:
    return base64.urlsafe_b64encode(f"a:{pk}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The last agent pk seen. Raises InvalidRequest for a cursor we did not issue."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, value = raw.split(":", 1)
        if kind == "a" and value.isdigit():
            return int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidRequest("cursor is not one this registry issued; start again without it")


def listing_columns(dialect: str) -> Callable[[FromClause], list[ColumnElement[Any]]]:
    """What the API shows of an agent, read from `table`: its pk (for the cursor) and id, the
    fields that change without a new card rendered as JSON by the database (`live`), and the
    card's stored profile."""
    def columns(table: FromClause) -> list[ColumnElement[Any]]:
        return [table.c.pk, table.c.id, live_json(table, dialect), table.c.profile]
    return columns


class DiscoveryService:
    def __init__(
        self, sessions: sessionmaker[Session], *, hide_dead_after: float | None = None,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        engine = sessions.kw["bind"]
        self._reads = separate_reads(engine)
        self._sessions = make_session_factory(self._reads or single_statements(engine))
        self._hide_dead_after = hide_dead_after
        self._clock = clock
        self._text_index = TextIndex(engine.dialect.name)
        self._columns = listing_columns(engine.dialect.name)
        self._generic = generic_plans(engine)
        self._planner = SearchPlanner(self._text_index, TermStats(sessions=self._sessions), self._columns, self._generic)
        # Built once: the rendered columns are a large expression, and a statement built per
        # request cost its construction and its cache key (~1 ms) every time.
        self._one = select(*self._columns(Agent.__table__)).where(Agent.id == bindparam("agent_id"))

    def close(self) -> None:
        for pool in (self._reads, self._generic):
            if pool is not None:
                pool.dispose()

    def search(self, query: AgentQuery) -> AgentPage:
        """Agents matching every filter, in registration order, `limit` at a time."""
        after = decode_cursor(query.cursor)
        filters = self._filters(query)
        if filters is None:
            return AgentPage([], None)
        with self._sessions() as session:
            rows = self._planner.page(session, filters, after, query.limit + 1)
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        return AgentPage(rows, encode_cursor(rows[-1].pk) if more else None)

    def _filters(self, query: AgentQuery) -> SearchFilters | None:
        """None when the query cannot match anything (text with no words). Raises InvalidRequest
        for more than MAX_SEARCH_TAGS tags."""
        if len(query.tags) > MAX_SEARCH_TAGS:
            # Each tag is a probe or a range of its own in the statement, and each count of them
            # a statement shape kept for reuse.
            raise InvalidRequest(f"a search takes at most {MAX_SEARCH_TAGS} tags, not {len(query.tags)}")
        text_query = None
        if query.text is not None:
            text_query = self._text_index.query(query.text)
            if text_query is None:
                return None
        terms = query.required_terms()
        any_tags = sorted({normalize_tag(t)[:MAX_TERM] for t in query.tags}) if query.match_any else []
        status = None if query.status == "any" else query.status
        if status is not None and not (terms or any_tags or text_query):
            terms, status = [("status", status)], None  # the only filter: its index drives the walk
        # Otherwise the status is checked on the agent's row, with the other per-agent filters,
        # rather than by one more index probe for every candidate.
        return SearchFilters(terms, any_tags, text_query, query.updated_since, query.health, self._dead_cutoff(query),
                             status)

    def _dead_cutoff(self, query: AgentQuery) -> dt.datetime | None:
        """Issue 5: agents down since before this time leave default search."""
        if query.include_dead or self._hide_dead_after is None:
            return None
        return self._clock() - dt.timedelta(seconds=self._hide_dead_after)

    def get(self, agent_id: str) -> Row[Any]:
        """The agent as the API shows it. Raises NotFound."""
        with self._sessions() as session:
            row = session.execute(self._one, {"agent_id": agent_id}).first()
        if row is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        return row

    def card(self, agent_id: str, version: int | None = None) -> AgentCard:
        """The current card (or a given version), verbatim. Raises NotFound."""
        with self._sessions() as session:
            stmt = select(AgentCard).join(Agent, Agent.pk == AgentCard.agent_pk).where(Agent.id == agent_id)
            stmt = stmt.where(AgentCard.version == version) if version else stmt.where(AgentCard.is_current.is_(True))
            card = session.scalar(stmt)
        if card is None:
            raise NotFound(f"no card {'version ' + str(version) + ' ' if version else ''}for agent {agent_id!r}")
        return card

    def versions(self, agent_id: str) -> list[dict[str, Any]]:
        """Every stored version, newest first, each with what changed since the one before."""
        with self._sessions() as session:
            cards = list(session.scalars(
                select(AgentCard).join(Agent, Agent.pk == AgentCard.agent_pk)
                .where(Agent.id == agent_id).order_by(AgentCard.version)
            ))
        if not cards:
            raise NotFound(f"no agent with id {agent_id!r}")
        history, previous = [], None
        for card in cards:
            parsed = json.loads(card.raw)
            history.append(_version_entry(card, None if previous is None else card_drift(previous, parsed)))
            previous = parsed
        return list(reversed(history))

    def tags(self, limit: int = 200, prefix: str | None = None) -> list[tuple[str, int]]:
        """Tags of active agents with how many agents carry each, most used first (kept counts:
        see `registry.catalog.tag_counts`)."""
        with self._sessions() as session:
            return TagCounts.read(session.connection(), limit, normalize_tag(prefix) if prefix else None)


def _version_entry(card: AgentCard, drift: dict[str, list[str]] | None) -> dict[str, Any]:
    return {
        "version": card.version,
        "isCurrent": card.is_current,
        "source": card.source,
        "fetchedFrom": card.fetched_from,
        "fetchedAt": card.fetched_at.isoformat(),
        "sha256": card.sha256,
        "protocolVersion": card.protocol_version,
        "valid": card.valid,
        "issues": card.issues,
        "changes": drift,
    }
