"""How a catalog search runs: pick the most selective index as the driver, walk it in agent
order from the cursor, and check every other filter by index probe until the page is full.

Every driver (a term's index range, the full-text index, the agents table) yields agent pks in
ascending order, so a page costs at most the length of the most selective list, the database
never sorts, and the cursor is simply the last pk. Term counts come from `TermStats`.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Integer, Select, bindparam, column, exists, func, or_, select, table, text
from sqlalchemy.orm import Session

from registry.models import Agent, AgentTerm
from registry.services.catalog_index import TextIndex

log = logging.getLogger(__name__)

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
    """Approximate agent counts per (kind, value), counted up to COUNT_CAP and cached briefly.

    With `sessions`, an expired count is still used while a background thread counts again
    (stale-while-revalidate): only a term never seen by this process is counted on a request.
    """

    def __init__(self, ttl: float = 60.0, monotonic: Callable[[], float] = time.monotonic,
                 sessions: Callable[[], Session] | None = None) -> None:
        self._ttl = ttl
        self._monotonic = monotonic
        self._sessions = sessions
        self._cache: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()
        self._due: set[tuple[str, str]] = set()
        self._refreshing = False

    def count(self, session: Session, kind: str, value: str) -> int:
        now = self._monotonic()
        cached = self._cache.get((kind, value))
        if cached is not None and (cached[0] > now or self._refresh_later((kind, value))):
            return cached[1]
        count = self._count(session, kind, value)
        self._store((kind, value), count)
        return count

    @staticmethod
    def _count(session: Session, kind: str, value: str) -> int:
        bounded = select(_TERMS.c.agent_pk).where(_TERMS.c.kind == kind, _TERMS.c.value == value).limit(COUNT_CAP)
        return int(session.connection().scalar(select(func.count()).select_from(bounded.subquery())) or 0)

    def _store(self, key: tuple[str, str], count: int) -> None:
        with self._lock:
            if len(self._cache) > 50_000:
                self._cache.clear()
            self._cache[key] = (self._monotonic() + self._ttl, count)

    def _refresh_later(self, key: tuple[str, str]) -> bool:
        """Queue `key` for the background counter; False when there is none (count now)."""
        if self._sessions is None:
            return False
        with self._lock:
            self._due.add(key)
            if not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh_due, name="term-stats", daemon=True).start()
        return True

    def _refresh_due(self) -> None:
        assert self._sessions is not None
        while True:
            with self._lock:
                if not self._due:
                    self._refreshing = False
                    return
                key = self._due.pop()
            try:
                with self._sessions() as session:
                    count = self._count(session, *key)
            except Exception:  # the database is away: keep the stale count a while longer
                log.warning("could not refresh the agent count of %s", key, exc_info=True)
                count = self._cache.get(key, (0.0, COUNT_CAP))[1]
            self._store(key, count)


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """A search reduced to what the planner needs: required terms, any-of tags, text, time."""

    terms: list[tuple[str, str]]
    any_tags: list[str]
    text_query: str | None
    updated_since: Any = None
    health: str | None = None  # the agent's rolled-up health state
    dead_cutoff: Any = None  # hide agents down since before this time
    status: str | None = None  # checked on the agent's row (a status term in `terms` is probed instead)


@dataclasses.dataclass(frozen=True)
class _Shape:
    """What a search statement looks like, without its values: the key of the statement cache."""

    driver: str  # "term", "any", "text" or "all"
    term_probes: int
    any_probe: bool
    text_probe: bool
    since: bool
    health: bool
    hide_dead: bool
    status: bool


class SearchPlanner:
    def __init__(self, text_index: TextIndex, stats: TermStats) -> None:
        self._text = text_index
        self._stats = stats
        self._shapes: dict[_Shape, Select[Any]] = {}

    def page_pks(self, session: Session, filters: SearchFilters, after: int, limit: int) -> list[int]:
        """Up to `limit` agent pks greater than `after`, ascending, matching every filter."""
        counts = sorted((self._stats.count(session, k, v), (k, v)) for k, v in filters.terms)
        driver = self._choose_driver(session, filters, counts)
        probes = [term for _, term in counts if driver != "term" or term != counts[0][1]]
        shape = _Shape(driver, len(probes), bool(filters.any_tags) and driver != "any",
                       filters.text_query is not None and driver != "text", filters.updated_since is not None,
                       filters.health is not None, filters.dead_cutoff is not None, filters.status is not None)
        params: dict[str, Any] = {"after": after, "limit": limit, "q": filters.text_query, "any": filters.any_tags,
                                  "since": filters.updated_since, "health": filters.health, "cutoff": filters.dead_cutoff,
                                  "status": filters.status}
        if driver == "term":
            params["dk"], params["dv"] = counts[0][1]
        for index, (kind, value) in enumerate(probes):
            params[f"k{index}"], params[f"v{index}"] = kind, value
        return list(session.connection().scalars(self._statement(shape), params))

    def _choose_driver(self, session: Session, filters: SearchFilters, counts: list[tuple[int, tuple[str, str]]]) -> str:
        rarest = counts[0][0] if counts else None
        if filters.any_tags:
            any_count = sum(self._stats.count(session, "tag", t) for t in filters.any_tags)
            if rarest is None or any_count < rarest:
                return "any"
        if filters.text_query is not None and (rarest is None or rarest > RARE_TERM):
            return "text"
        return "term" if counts else "all"

    def _statement(self, shape: _Shape) -> Select[Any]:
        # Statements are cached by shape with bound values, so SQLAlchemy's compiled cache is hit
        # and no aliases are rebuilt per request.
        stmt = self._shapes.get(shape)
        if stmt is None:
            stmt = self._shapes[shape] = self._build(shape)
        return stmt

    def _build(self, shape: _Shape) -> Select[Any]:
        driver_pk, stmt = self._driver_statement(shape.driver)
        for index in range(shape.term_probes):
            probe = _TERMS.alias(f"p{index}")
            stmt = stmt.where(exists().where(probe.c.agent_pk == driver_pk, probe.c.kind == bindparam(f"k{index}"),
                                             probe.c.value == bindparam(f"v{index}")))
        if shape.any_probe:
            probe = _TERMS.alias("pany")
            stmt = stmt.where(exists().where(probe.c.agent_pk == driver_pk, probe.c.kind == "tag",
                                             probe.c.value.in_(bindparam("any", expanding=True))))
        if shape.text_probe:
            stmt = stmt.where(self._text_probe(driver_pk))
        agent_conditions = self._agent_conditions(shape)
        if agent_conditions:
            stmt = stmt.where(exists().where(_AGENTS.c.pk == driver_pk, *agent_conditions))
        return stmt.where(driver_pk > bindparam("after")).order_by(driver_pk).limit(bindparam("limit"))

    @staticmethod
    def _agent_conditions(shape: _Shape) -> list[ColumnElement[bool]]:
        conditions = []
        if shape.since:
            conditions.append(_AGENTS.c.updated_at >= bindparam("since"))
        if shape.health:
            conditions.append(_AGENTS.c.health_state == bindparam("health"))
        if shape.hide_dead:
            conditions.append(or_(_AGENTS.c.health_state != "down", _AGENTS.c.health_since >= bindparam("cutoff")))
        if shape.status:
            conditions.append(_AGENTS.c.status == bindparam("status"))
        return conditions

    def _driver_statement(self, driver: str) -> tuple[ColumnElement[int], Select[Any]]:
        if driver == "any":
            table = _TERMS.alias("driver")
            stmt = select(table.c.agent_pk).distinct().where(
                table.c.kind == "tag", table.c.value.in_(bindparam("any", expanding=True)))
            return table.c.agent_pk, stmt
        if driver == "term":
            table = _TERMS.alias("driver")
            stmt = select(table.c.agent_pk).where(table.c.kind == bindparam("dk"), table.c.value == bindparam("dv"))
            return table.c.agent_pk, stmt
        if driver == "text" and self._text.sqlite:
            return _FTS.c.rowid, select(_FTS.c.rowid).where(text("agent_fts MATCH :q"))
        if driver == "text":
            return _SEARCH.c.agent_pk, select(_SEARCH.c.agent_pk).where(
                text("agent_search.document_tsv @@ to_tsquery('simple', :q)"))
        return _AGENTS.c.pk, select(_AGENTS.c.pk)

    def _text_probe(self, driver_pk: ColumnElement[int]) -> ColumnElement[bool]:
        if self._text.sqlite:
            # FTS5 answers "MATCH and rowid = ?" by seeking in the doclist, not by scanning it.
            fts = _FTS.alias("fts_probe")
            return exists().where(fts.c.rowid == driver_pk, text("fts_probe.agent_fts MATCH :q"))
        search = _SEARCH.alias("search_probe")
        return exists().where(
            search.c.agent_pk == driver_pk,
            text("search_probe.document_tsv @@ to_tsquery('simple', :q)"),
        )
