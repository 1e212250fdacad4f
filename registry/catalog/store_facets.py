"""What facets read (`registry.catalog.facets`), mixed into `CatalogStore`: how many of a set of
agents carry each value of the kinds asked, in one statement; the same over the whole catalog, from
the lookup index alone (and `tag_counts` for active agents' tags); which agents a search leaves out
by default; and a marker that moves with every write to the catalog."""

from __future__ import annotations

import collections
import datetime as dt
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    TextClause,
    bindparam,
    func,
    literal_column,
    or_,
    select,
    text,
    union_all,
)

from registry.audit import AuditEntry
from registry.catalog.models import Agent, AgentTerm, TagCount, TagCountDelta

Counts = dict[str, collections.Counter[str]]  # by kind: value → agents carrying it
Top = tuple[list[tuple[str, int]], int]  # the values most carried first, with counts; all pairs
HEALTH = "health"  # a kind read from the agents' rolled-up health, not from their terms
ACTIVE_TAGS, TERMS = "active tags", "terms"

_TERMS = AgentTerm.__table__
_AGENTS = Agent.__table__
# The agents' pks go as one parameter, an array or a JSON document, however many they are.
_AMONG: dict[str, tuple[TextClause, TextClause]] = {
    "sqlite": (
        # CROSS JOIN keeps the order written: each agent's terms read by the primary key, rather
        # than every term of a kind tested against the list.
        text(
            "SELECT t.kind, t.value, count(*) FROM json_each(:pks) AS p CROSS JOIN agent_terms AS t "
            "ON t.agent_pk = p.value AND t.kind IN (SELECT value FROM json_each(:kinds)) GROUP BY t.kind, t.value"
        ),
        text(
            "SELECT health_state, count(*) FROM agents WHERE pk IN (SELECT value FROM json_each(:pks)) "
            "GROUP BY health_state"
        ),
    ),
    "postgresql": (
        text(
            "SELECT kind, value, count(*) FROM agent_terms WHERE agent_pk = ANY(CAST(:pks AS integer[])) "
            "AND kind = ANY(CAST(:kinds AS text[])) GROUP BY kind, value"
        ),
        text("SELECT health_state, count(*) FROM agents WHERE pk = ANY(CAST(:pks AS integer[])) GROUP BY health_state"),
    ),
}
_MARKER = select(func.max(AuditEntry.id))
_TAGS_HELD = (select(func.sum(TagCount.count)), select(func.sum(TagCountDelta.delta)))


@functools.cache
def _top_statements(dialect: str, source: str) -> tuple[Select[Any], tuple[Select[Any], ...]]:
    """The `:top` values of a kind the most agents carry (most first, then by value), with their
    counts, grouped in index order; and the statements whose sum counts them all (a window for
    that sum would read every group a second time). `source`: ACTIVE_TAGS (from `tag_counts`), HEALTH
    (the agents' column) or TERMS (the lookup index alone, for the kind `:kind`)."""
    if source == ACTIVE_TAGS:  # as `TagCounts.read`, ordered as below
        folded = select(TagCount.tag.label("value"), TagCount.count.label("n"))
        pending = select(TagCountDelta.tag.label("value"), TagCountDelta.delta.label("n"))
        tags = union_all(folded, pending).subquery()
        count = func.sum(tags.c.n)
        top = select(tags.c.value, count).group_by(tags.c.value).having(count > 0)
        return _first(top, count, tags.c.value, dialect), _TAGS_HELD
    column = _AGENTS.c.health_state if source == HEALTH else _TERMS.c.value
    where = [] if source == HEALTH else [_TERMS.c.kind == bindparam("kind")]
    top = select(column, func.count().label("n")).where(*where).group_by(column)
    return _first(top, literal_column("n"), column, dialect), (
        select(func.count()).select_from(column.table).where(*where),
    )


def _first(groups: Select[Any], count: Any, value: Any, dialect: str) -> Select[Any]:
    # Values in code point order, as Python orders those of a few agents: SQLite's default
    # collation is that order, PostgreSQL's may be a language's.
    in_order = value.collate("C") if dialect == "postgresql" else value
    return groups.order_by(count.desc(), in_order).limit(bindparam("top"))


class FacetReads:
    """The reads of facets; `CatalogStore` provides the engines."""

    engine: Engine
    _reads: Engine

    def counts_among(self, pks: Sequence[int], kinds: Iterable[str]) -> Counts:
        """How many of the agents `pks` carry each value of each kind."""
        counts: Counts = {kind: collections.Counter() for kind in kinds}
        if not pks:
            return counts
        terms, health = _AMONG[self.engine.dialect.name]
        sqlite = self.engine.dialect.name == "sqlite"
        pk_list = orjson.dumps(list(pks)).decode() if sqlite else list(pks)
        term_kinds = [kind for kind in counts if kind != HEALTH]
        with self._reads.connect() as conn:
            if term_kinds:
                params = {"pks": pk_list, "kinds": orjson.dumps(term_kinds).decode() if sqlite else term_kinds}
                for kind, value, count in conn.execute(terms, params):
                    counts[kind][value] = count
            if HEALTH in counts:
                counts[HEALTH].update({state: count for state, count in conn.execute(health, {"pks": pk_list})})
        return counts

    def catalog_top(self, tops: Mapping[str, int], active_tags: bool = False) -> dict[str, Top]:
        """For each kind, the `tops[kind]` values the most agents of the whole catalog carry (most
        first, then by value) and how many (agent, value) pairs it holds; with `active_tags`, tags
        are those of active agents (`tag_counts`, kept as the catalog changes)."""
        with self._reads.connect() as conn:
            return {kind: self._catalog_top(conn, kind, top, active_tags) for kind, top in tops.items()}

    def _catalog_top(self, conn: Connection, kind: str, top: int, active_tags: bool) -> Top:
        source = ACTIVE_TAGS if kind == "tag" and active_tags else HEALTH if kind == HEALTH else TERMS
        values, totals = _top_statements(self.engine.dialect.name, source)
        rows = [(value, int(count)) for value, count in conn.execute(values, {"kind": kind, "top": top})]
        if len(rows) < top:  # every value (a kind of few: modes, capabilities, states): no second read
            return rows, sum(count for _, count in rows)
        return rows, sum(int(conn.scalar(total, {"kind": kind}) or 0) for total in totals)

    def left_out(self, status: str | None, dead_cutoff: dt.datetime | None) -> tuple[set[int], set[int]]:
        """The agents a search for `status` (None: any) leaves out: those of another status, and
        those hidden as down since before `dead_cutoff` (None: none hidden), whatever their status."""
        statements: list[Any] = []
        if status is not None:
            # Two ranges of the lookup index around the status, not every status term read.
            kind = _TERMS.c.kind == "status"
            statements.append(
                union_all(
                    select(_TERMS.c.agent_pk).where(kind, _TERMS.c.value < status),
                    select(_TERMS.c.agent_pk).where(kind, _TERMS.c.value > status),
                )
            )
        if dead_cutoff is not None:
            since = _AGENTS.c.health_since
            # As the search hides them: down, and not since the cutoff (an unknown time included).
            hidden = or_(since < dead_cutoff, since.is_(None))
            statements.append(select(_AGENTS.c.pk).where(_AGENTS.c.health_state == "down", hidden))
        with self._reads.connect() as conn:
            found = [set(conn.scalars(statement)) for statement in statements]
        other = found.pop(0) if status is not None else set()
        return other, found[0] if found else set()

    def catalog_marker(self) -> Any:
        """Moves with every write to the catalog: registrations, new cards, status changes and
        removals each write an audit entry in their transaction."""
        with self._reads.connect() as conn:
            return conn.scalar(_MARKER)
