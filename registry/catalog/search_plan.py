"""How a catalog search runs: pick the most selective index as the driver, walk it in agent
order from the cursor, and check every other filter by index probe until the page is full.

Every driver (a term's index range, the full-text index, the agents table) yields agent pks in
ascending order, so a page costs at most the length of the most selective list, the database
never sorts, and the cursor is simply the last pk. Term counts come from `TermStats`.

PostgreSQL turns the probes into joins and picks merge or nested-loop joins from its own row
estimates (see migration 0008 for the statistics they rest on). Two things keep its choices
cheap on every page: each table is bounded by the cursor itself, because the planner does not
carry `pk > :after` from one side of a join to the other (a merge join would otherwise walk the
agents table from its first row: 177 ms for a text page at pk 60,000 of 100,000); and any-of tags
are one ordered range per tag, merged, rather than an IN list, whose ranges come out unordered
and had to be read whole and sorted before the first row of a page.

Planning a search for its values costs PostgreSQL ~0.6–0.7 ms, more than running it when every
term is rare (at most RARE_TERM agents): then whatever join the planner picks reads a few
thousand index entries at most. Such searches run one generic plan, prepared once per connection
(`registry.db.generic_plans`): at 10,000 agents the page statement of 400 two-tag queries took
0.31–0.41 ms at the median, against 1.22–1.36 ms planned each time. A common term, text, any-of
tags or a time or health filter keep a plan for their values: one generic plan merged a tag of
192 agents with one of 21,706 (13.6 ms, where probing the 192 took under 1 ms).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Connection,
    Engine,
    FromClause,
    Integer,
    Row,
    Select,
    bindparam,
    column,
    exists,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
    union,
    union_all,
)
from sqlalchemy.orm import Session

from registry.schema import Agent, AgentTerm
from registry.catalog.text_index import TSQUERY_MATCH, TextIndex

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
_SEARCH = table("agent_search", column("agent_pk", Integer))


class TermStats:
    """Approximate agent counts per (kind, value), counted up to COUNT_CAP and cached briefly.

    With `sessions`, an expired count is still used while a background thread counts again
    (stale-while-revalidate), and a term never seen by this process is counted on the request
    only up to RARE_TERM + 1, enough to tell a rare term (counted exactly) from a common one,
    whose full count follows in the background: a full count on the request read up to 20,000
    index entries (~5–10 ms at 100,000 agents on PostgreSQL) for the first query of each tag.
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
        key = (kind, value)
        cached = self._cache.get(key)
        if cached is not None and (cached[0] > now or self._refresh_later(key)):
            return cached[1]
        if cached is None and self._sessions is not None:
            count = self._count(session, kind, value, RARE_TERM + 1)
            self._store(key, count)
            if count > RARE_TERM:
                self._refresh_later(key)
            return count
        count = self._count(session, kind, value)
        self._store(key, count)
        return count

    @staticmethod
    def _count(session: Session, kind: str, value: str, cap: int = COUNT_CAP) -> int:
        bounded = select(_TERMS.c.agent_pk).where(_TERMS.c.kind == kind, _TERMS.c.value == value).limit(cap)
        connection = session.connection()
        with _planned_for_their_values(connection):
            return int(connection.scalar(select(func.count()).select_from(bounded.subquery())) or 0)

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


@contextlib.contextmanager
def _planned_for_their_values(connection: Connection) -> Iterator[None]:
    """Statements run here are planned for their values every time, never from a generic plan.

    psycopg prepares a statement once it has run five times on a connection, and PostgreSQL then
    settles on one generic plan for all values. For a search that plan merged a tag of 192 agents
    with one of 21,706 (13.6 ms, where probing the 192 took under 1 ms), and it would walk every
    document for a word no agent has rather than ask the text index. Planning each time costs
    ~1 ms of a search on the bench machine.
    """
    driver_connection = connection.connection.dbapi_connection
    threshold = getattr(driver_connection, "prepare_threshold", None)  # psycopg only
    if threshold is None:
        yield
        return
    driver_connection.prepare_threshold = None
    try:
        yield
    finally:
        driver_connection.prepare_threshold = threshold


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
    any_ranges: int  # with the "any" driver: how many tags, one ordered range each
    term_probes: int
    any_probe: bool
    text_probe: bool
    since: bool
    health: bool
    hide_dead: bool
    status: bool


class SearchPlanner:
    """Builds and runs the statement of a search page: the matching pks (see the module
    docstring) and, in the same statement, the `columns` of those agents (read from the agents
    table or an alias of it)."""

    def __init__(self, text_index: TextIndex, stats: TermStats,
                 columns: Callable[[FromClause], list[ColumnElement[Any]]], generic: Engine | None = None) -> None:
        self._generic = generic
        self._text = text_index
        self._stats = stats
        self._columns = columns
        self._shapes: dict[_Shape, Select[Any]] = {}

    def page(self, session: Session, filters: SearchFilters, after: int, limit: int) -> list[Row[Any]]:
        """Up to `limit` agents with a pk greater than `after`, ascending, matching every filter.

        The page and its rows are one statement, one snapshot, so it needs no transaction: give
        a session of `registry.db.single_statements`, which spares PostgreSQL the BEGIN and ROLLBACK.
        A search by rare terms alone runs on the `generic` connections instead (module docstring).
        """
        shape, params, generic = self._plan(session, filters)
        params.update(after=after, limit=limit)
        statement = self._statement(shape)
        if generic and self._generic is not None:
            with self._generic.connect() as conn:
                return conn.execute(statement, params).all()
        connection = session.connection()
        with _planned_for_their_values(connection):
            return connection.execute(statement, params).all()

    def _plan(self, session: Session, filters: SearchFilters) -> tuple[_Shape, dict[str, Any], bool]:
        counts = sorted((self._stats.count(session, k, v), (k, v)) for k, v in filters.terms)
        driver = self._choose_driver(session, filters, counts)
        probes = [term for _, term in counts if driver != "term" or term != counts[0][1]]
        any_ranges = len(filters.any_tags) if driver == "any" else 0
        shape = _Shape(driver, any_ranges, len(probes), bool(filters.any_tags) and driver != "any",
                       filters.text_query is not None and driver != "text", filters.updated_since is not None,
                       filters.health is not None, filters.dead_cutoff is not None, filters.status is not None)
        params: dict[str, Any] = {"q": filters.text_query, "any": filters.any_tags, "since": filters.updated_since,
                                  "health": filters.health, "cutoff": filters.dead_cutoff, "status": filters.status}
        if driver == "term":
            params["dk"], params["dv"] = counts[0][1]
        for index, (kind, value) in enumerate(probes):
            params[f"k{index}"], params[f"v{index}"] = kind, value
        for index in range(any_ranges):
            params[f"a{index}"] = filters.any_tags[index]
        generic = (driver == "term" and counts[-1][0] <= RARE_TERM and not (shape.any_probe or shape.text_probe
                   or shape.since or shape.health))
        return shape, params, generic

    def _choose_driver(self, session: Session, filters: SearchFilters, counts: list[tuple[int, tuple[str, str]]]) -> str:
        rarest = counts[0][0] if counts else None
        if filters.any_tags:
            any_count = sum(self._stats.count(session, "tag", t) for t in filters.any_tags)
            # Not with text to match and common tags: a full-text probe of one agent reads the
            # word's whole doclist, so the text index drives (280 ms for two popular tags and a
            # common word at 100,000 agents when the tags drove).
            common_with_text = filters.text_query is not None and any_count > RARE_TERM
            if (rarest is None or any_count < rarest) and not common_with_text:
                return "any"
        if filters.text_query is not None and (rarest is None or rarest > RARE_TERM):
            return "text"
        return "term" if counts else "all"

    def _statement(self, shape: _Shape) -> Select[Any]:
        # Statements are cached by shape with bound values, so SQLAlchemy's compiled cache is hit
        # and no aliases are rebuilt per request.
        stmt = self._shapes.get(shape)
        if stmt is None:
            stmt = self._shapes[shape] = self._listing(self._build(shape))
        return stmt

    def _listing(self, page: Select[Any] | CompoundSelect) -> Select[Any]:
        # The agents' rows come with their pks, in one statement: one round trip, one snapshot.
        # The page is a subquery with a LIMIT, which neither database flattens into the join.
        pks = page.subquery("page")
        listed = _AGENTS.alias("listed")
        return (select(*self._columns(listed))
                .join_from(listed, pks, listed.c.pk == next(iter(pks.c))).order_by(listed.c.pk))

    def _build(self, shape: _Shape) -> Select[Any] | CompoundSelect:
        if shape.driver == "any" and self._text.sqlite:
            # SQLite merges the ordered ranges of a UNION (MERGE (UNION)) only when the union is
            # the statement, with its own ORDER BY and LIMIT; as a subquery under filters it sorts
            # every row of every range first (172 ms for three popular tags at 100,000 agents,
            # 0.4 ms merged). So every filter goes into each tag's range, and the union is the page.
            arms = [self._filtered(shape, *self._any_arm(index)) for index in range(shape.any_ranges)]
            return union(*arms).order_by(literal_column("agent_pk")).limit(bindparam("limit"))
        driver_pk, stmt = self._driver_statement(shape)
        return self._filtered(shape, driver_pk, stmt).order_by(driver_pk).limit(bindparam("limit"))

    def _filtered(self, shape: _Shape, driver_pk: ColumnElement[int], stmt: Select[Any]) -> Select[Any]:
        """`stmt` with every filter but its driver's, each as an index probe of `driver_pk`."""
        after = bindparam("after")
        for index in range(shape.term_probes):
            probe = _TERMS.alias(f"p{index}")
            stmt = stmt.where(exists().where(probe.c.agent_pk == driver_pk, probe.c.agent_pk > after,
                                             probe.c.kind == bindparam(f"k{index}"),
                                             probe.c.value == bindparam(f"v{index}")))
        if shape.any_probe:
            probe = _TERMS.alias("pany")
            stmt = stmt.where(exists().where(probe.c.agent_pk == driver_pk, probe.c.agent_pk > after,
                                             probe.c.kind == "tag", probe.c.value.in_(bindparam("any", expanding=True))))
        if shape.text_probe:
            stmt = stmt.where(self._text_probe(driver_pk))
        agent_conditions = self._agent_conditions(shape)
        if agent_conditions:
            stmt = stmt.where(exists().where(_AGENTS.c.pk == driver_pk, _AGENTS.c.pk > after, *agent_conditions))
        return stmt.where(driver_pk > after)

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

    def _driver_statement(self, shape: _Shape) -> tuple[ColumnElement[int], Select[Any]]:
        driver = shape.driver
        if driver == "any":
            return self._any_driver(shape.any_ranges)
        if driver == "term":
            table = _TERMS.alias("driver")
            stmt = select(table.c.agent_pk).where(table.c.kind == bindparam("dk"), table.c.value == bindparam("dv"))
            return table.c.agent_pk, stmt
        if driver == "text" and self._text.sqlite:
            return _FTS.c.rowid, select(_FTS.c.rowid).where(text("agent_fts MATCH :q"))
        if driver == "text":
            return _SEARCH.c.agent_pk, select(_SEARCH.c.agent_pk).where(
                text(TSQUERY_MATCH.format(table="agent_search")))
        return _AGENTS.c.pk, select(_AGENTS.c.pk)

    @staticmethod
    def _any_arm(index: int) -> tuple[ColumnElement[int], Select[Any]]:
        """The agents with the `index`th of the any-of tags, in pk order (by the lookup index)."""
        term = _TERMS.alias(f"any{index}")
        return term.c.agent_pk, select(term.c.agent_pk).where(
            term.c.kind == "tag", term.c.value == bindparam(f"a{index}"))

    def _any_driver(self, ranges: int) -> tuple[ColumnElement[int], Select[Any]]:
        """Agents with any of the tags, each once, in pk order (PostgreSQL; SQLite: `_build`).

        One range per tag, merged (Merge Append) and deduplicated as they stream, so a page stops
        after its last row. The ORDER BY in each branch is what lets PostgreSQL merge them: a
        UNION ALL branch with a WHERE clause is planned as a subquery of its own, and only the
        order it was asked for is known outside it.
        """
        branches = []
        for index in range(ranges):
            term_pk, branch = self._any_arm(index)
            branches.append(branch.where(term_pk > bindparam("after")).order_by(term_pk))
        driver = union_all(*branches).subquery("driver")
        return driver.c.agent_pk, select(driver.c.agent_pk).distinct()

    def _text_probe(self, driver_pk: ColumnElement[int]) -> ColumnElement[bool]:
        if self._text.sqlite:
            # FTS5 answers "MATCH and rowid = ?" by seeking in the doclist, not by scanning it.
            fts = _FTS.alias("fts_probe")
            return exists().where(fts.c.rowid == driver_pk, text("fts_probe.agent_fts MATCH :q"))
        search = _SEARCH.alias("search_probe")
        return exists().where(
            search.c.agent_pk == driver_pk,
            search.c.agent_pk > bindparam("after"),
            text(TSQUERY_MATCH.format(table="search_probe")),
        )
