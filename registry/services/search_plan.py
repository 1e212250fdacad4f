"""How a catalog search runs: pick the most selective index as the driver, walk it in agent
order from the cursor, and check every other filter by index probe until the page is full.

Every driver (a term's index range, the full-text index, the agents table) yields agent pks in
ascending order, so a page costs at most the length of the most selective list, the database
never sorts, and the cursor is simply the last pk. Term counts come from `TermStats`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Integer, Select, column, exists, func, select, table, text
from sqlalchemy.orm import Session

from registry.models import Agent, AgentTerm
from registry.services.catalog_index import TextIndex

# Past this many agents a term is "common": the exact count no longer changes the plan.
COUNT_CAP = 20_000
# A term rarer than this drives the query even when there is text to match.
RARE_TERM = 2_000

# Core tables, not ORM entities: a search builds a fresh statement per request, and Core
# aliases cost a fraction of ORM ones.
_TERMS = AgentTerm.__table__
_AGENTS = Agent.__table__
_FTS = table("agent_fts", column("rowid", Integer))
_SEARCH = table("agent_search", column("agent_pk", Integer), column("document"))


class TermStats:
    """Approximate agent counts per (kind, value), counted up to COUNT_CAP and cached briefly."""

    def __init__(self, ttl: float = 60.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._monotonic = monotonic
        self._cache: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def count(self, session: Session, kind: str, value: str) -> int:
        now = self._monotonic()
        cached = self._cache.get((kind, value))
        if cached is not None and cached[0] > now:
            return cached[1]
        bounded = select(_TERMS.c.agent_pk).where(_TERMS.c.kind == kind, _TERMS.c.value == value).limit(COUNT_CAP)
        count = int(session.connection().scalar(select(func.count()).select_from(bounded.subquery())) or 0)
        with self._lock:
            if len(self._cache) > 50_000:
                self._cache.clear()
            self._cache[(kind, value)] = (now + self._ttl, count)
        return count


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """A search reduced to what the planner needs: required terms, any-of tags, text, time."""

    terms: list[tuple[str, str]]
    any_tags: list[str]
    text_query: str | None
    updated_since: Any = None
    agent_conditions: tuple[ColumnElement[bool], ...] = ()  # on the agent's own columns (health)


class SearchPlanner:
    def __init__(self, text_index: TextIndex, stats: TermStats) -> None:
        self._text = text_index
        self._stats = stats

    def page_pks(self, session: Session, filters: SearchFilters, after: int, limit: int) -> list[int]:
        """Up to `limit` agent pks greater than `after`, ascending, matching every filter."""
        counts = sorted((self._stats.count(session, k, v), (k, v)) for k, v in filters.terms)
        driver_pk, stmt, probed = self._driver(session, filters, counts)
        for kind, value in (term for _, term in counts if term not in probed):
            stmt = stmt.where(self._term_probe(driver_pk, kind, value))
        if filters.any_tags and "any" not in probed:
            stmt = stmt.where(self._any_probe(driver_pk, filters.any_tags))
        if filters.text_query is not None and "text" not in probed:
            stmt = stmt.where(self._text_probe(driver_pk, filters.text_query))
        if filters.updated_since is not None:
            stmt = stmt.where(exists().where(_AGENTS.c.pk == driver_pk, _AGENTS.c.updated_at >= filters.updated_since))
        if filters.agent_conditions:
            stmt = stmt.where(exists().where(_AGENTS.c.pk == driver_pk, *filters.agent_conditions))
        return list(session.connection().scalars(stmt.where(driver_pk > after).order_by(driver_pk).limit(limit)))

    def _driver(self, session: Session, filters: SearchFilters,
                counts: list[tuple[int, tuple[str, str]]]) -> tuple[ColumnElement[int], Select[Any], set[Any]]:
        rarest = counts[0][0] if counts else None
        if filters.any_tags:
            any_count = sum(self._stats.count(session, "tag", t) for t in filters.any_tags)
            if rarest is None or any_count < rarest:
                driver = _TERMS.alias("driver")
                stmt = select(driver.c.agent_pk).distinct().where(driver.c.kind == "tag", driver.c.value.in_(filters.any_tags))
                return driver.c.agent_pk, stmt, {"any"}
        if filters.text_query is not None and (rarest is None or rarest > RARE_TERM):
            return self._text_driver(filters.text_query)
        if counts:
            kind, value = counts[0][1]
            driver = _TERMS.alias("driver")
            stmt = select(driver.c.agent_pk).where(driver.c.kind == kind, driver.c.value == value)
            return driver.c.agent_pk, stmt, {(kind, value)}
        return _AGENTS.c.pk, select(_AGENTS.c.pk), set()

    def _text_driver(self, query: str) -> tuple[ColumnElement[int], Select[Any], set[Any]]:
        if self._text.sqlite:
            stmt = select(_FTS.c.rowid).where(text("agent_fts MATCH :q").bindparams(q=query))
            return _FTS.c.rowid, stmt, {"text"}
        stmt = select(_SEARCH.c.agent_pk).where(
            text("to_tsvector('simple', agent_search.document) @@ to_tsquery('simple', :q)").bindparams(q=query)
        )
        return _SEARCH.c.agent_pk, stmt, {"text"}

    @staticmethod
    def _term_probe(driver_pk: ColumnElement[int], kind: str, value: str) -> ColumnElement[bool]:
        probe = _TERMS.alias()
        return exists().where(probe.c.agent_pk == driver_pk, probe.c.kind == kind, probe.c.value == value)

    @staticmethod
    def _any_probe(driver_pk: ColumnElement[int], tags: list[str]) -> ColumnElement[bool]:
        probe = _TERMS.alias()
        return exists().where(probe.c.agent_pk == driver_pk, probe.c.kind == "tag", probe.c.value.in_(tags))

    def _text_probe(self, driver_pk: ColumnElement[int], query: str) -> ColumnElement[bool]:
        if self._text.sqlite:
            # FTS5 answers "MATCH and rowid = ?" by seeking in the doclist, not by scanning it.
            fts = _FTS.alias("fts_probe")
            return exists().where(fts.c.rowid == driver_pk, text("fts_probe.agent_fts MATCH :q").bindparams(q=query))
        search = _SEARCH.alias("search_probe")
        return exists().where(
            search.c.agent_pk == driver_pk,
            text("to_tsvector('simple', search_probe.document) @@ to_tsquery('simple', :q)").bindparams(q=query),
        )
