"""How the catalog store runs a search: pick the most selective index as the driver, walk it in
agent order from the cursor, and check every other filter by index probe until the page is full.

Every driver (a term's index range, the ranges of an any-of group, the agents table) yields
agent pks in ascending order, so a page costs at most the length of the most selective list, the database
never sorts, and the cursor is simply the last pk. Each table is bounded by the cursor itself,
because PostgreSQL's planner does not carry `pk > :after` from one side of a join to the other
(a merge join would otherwise walk the agents table from its first row); and a driving any-of
group (tags, hosts, modes …) is one ordered range per value, merged, rather than an IN list, whose
ranges come out unordered and had to be read whole and sorted before the first row of a page. The
other groups are probes, an IN list each.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import (
    ARRAY,
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Connection,
    Integer,
    Select,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
    union,
    union_all,
)

from registry.catalog.models import Agent, AgentTerm

# Past this many agents a term is "common": the exact count no longer changes the plan.
COUNT_CAP = 20_000

_TERMS = AgentTerm.__table__
_AGENTS = Agent.__table__


class TermStats:
    """How many agents hold a term, counted up to COUNT_CAP and kept for `ttl` seconds: the
    driver of a search is its rarest term, and the counts change slowly."""

    def __init__(self, ttl: float = 60.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._monotonic = monotonic
        self._cache: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def count(self, conn: Connection, kind: str, value: str) -> int:
        cached = self._cache.get((kind, value))
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        bounded = select(_TERMS.c.agent_pk).where(_TERMS.c.kind == kind, _TERMS.c.value == value).limit(COUNT_CAP)
        count = int(conn.scalar(select(func.count()).select_from(bounded.subquery())) or 0)
        with self._lock:
            if len(self._cache) > 50_000:
                self._cache.clear()
            self._cache[(kind, value)] = (self._monotonic() + self._ttl, count)
        return count


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """A search reduced to what the planner needs: required terms, any-of groups, time, agents' states."""

    terms: list[tuple[str, str]]
    any_tags: list[str]  # an any-of group of tags (`match=any`)
    among: Sequence[int] | None = None  # only these agents (a ranked query's candidates)
    updated_since: Any = None
    health: str | None = None  # the agent's rolled-up health state
    dead_cutoff: Any = None  # hide agents down since before this time
    status: str | None = None  # checked on the agent's row (a status term in `terms` is probed instead)
    any_terms: Sequence[tuple[str, Sequence[str]]] = ()  # more any-of groups: (kind, values)
    health_in: Sequence[str] = ()  # the agent's health is one of these (two or more; one is `health`)
    status_in: Sequence[str] = ()  # likewise its status

    def groups(self) -> list[tuple[str, Sequence[str]]]:
        """Every any-of group, (kind, values): an agent holds a term of each."""
        return [("tag", self.any_tags)] * bool(self.any_tags) + list(self.any_terms)

    def counted_terms(self) -> list[tuple[str, str]]:
        """The terms whose agent counts choose the driver."""
        return [*self.terms, *((kind, value) for kind, values in self.groups() for value in values)]

    def key(self) -> tuple[Any, ...]:
        """What the filters select, as a dictionary key (the dead cutoff moves with the clock: only
        whether dead agents are hidden)."""
        groups = tuple((kind, tuple(values)) for kind, values in self.groups())
        among = None if self.among is None else tuple(self.among)
        states = (self.health, tuple(self.health_in), self.status, tuple(self.status_in))
        return (tuple(self.terms), groups, among, self.updated_since, states, self.dead_cutoff is not None)


@dataclasses.dataclass(frozen=True)
class _Shape:
    """What a search statement looks like, without its values: the key of the statement cache."""

    driver: str  # "term", "any" or "all"
    any_ranges: int  # with the "any" driver: how many values its group has, one ordered range each
    term_probes: int
    group_probes: int  # any-of groups that do not drive: one probe each
    among: bool
    since: bool
    health: bool
    health_in: bool
    hide_dead: bool
    status: bool
    status_in: bool


class SearchStatements:
    """Builds the statement of a search page: the matching pks (see the module docstring) and, in
    the same statement, the listed columns of those agents. What differs by database comes from
    SQLite and PostgreSQL: how text is matched, and how the ranges of an any-of group are merged."""

    def __init__(self, dialect: str, listed_columns: Sequence[str]) -> None:
        self._sqlite = dialect == "sqlite"
        self._listed_columns = listed_columns
        self._shapes: dict[tuple[_Shape, tuple[str, ...]], Select[Any]] = {}

    def plan(self, filters: SearchFilters, counts: dict[tuple[str, str], int]) -> tuple[_Shape, dict[str, Any]]:
        """The statement's shape (which index drives it, which filters probe) and its parameters
        (all but `after` and `limit`), given how many agents hold each term of the filters."""
        ordered = sorted((counts[term], term) for term in filters.terms)
        groups = filters.groups()
        driving = self._driving_group(filters, groups, ordered, counts)
        driver = "any" if driving is not None else "term" if ordered and filters.among is None else "all"
        probes = [term for _, term in ordered if driver != "term" or term != ordered[0][1]]
        ranges = [(groups[driving][0], value) for value in groups[driving][1]] if driving is not None else []
        probed = [group for index, group in enumerate(groups) if index != driving]
        shape = _Shape(
            driver,
            len(ranges),
            len(probes),
            len(probed),
            filters.among is not None,
            filters.updated_since is not None,
            filters.health is not None,
            bool(filters.health_in),
            filters.dead_cutoff is not None,
            filters.status is not None,
            bool(filters.status_in),
        )
        params: dict[str, Any] = {
            "among": list(filters.among or ()),
            "since": filters.updated_since,
            "health": filters.health,
            "health_in": list(filters.health_in),
            "cutoff": filters.dead_cutoff,
            "status": filters.status,
            "status_in": list(filters.status_in),
        }
        if driver == "term":
            params["dk"], params["dv"] = ordered[0][1]
        for index, (kind, value) in enumerate(probes):
            params[f"k{index}"], params[f"v{index}"] = kind, value
        for index, (kind, values) in enumerate(probed):
            params[f"gk{index}"], params[f"gv{index}"] = kind, list(values)
        for index, (kind, value) in enumerate(ranges):
            params[f"ak{index}"], params[f"a{index}"] = kind, value
        return shape, params

    @staticmethod
    def _driving_group(
        filters: SearchFilters,
        groups: list[tuple[str, Sequence[str]]],
        ordered: list[tuple[int, tuple[str, str]]],
        counts: dict[tuple[str, str], int],
    ) -> int | None:
        """The any-of group whose ranges drive the search: the one holding fewest agents, when it
        holds fewer than the rarest required term."""
        if filters.among is not None or not groups:
            return None  # a ranked query's few candidates, each probed; or no group
        held = [sum(counts[(kind, value)] for value in values) for kind, values in groups]
        fewest = min(range(len(groups)), key=held.__getitem__)
        return fewest if not ordered or held[fewest] < ordered[0][0] else None

    def statement(self, shape: _Shape, columns: Sequence[str] | None = None) -> Select[Any]:
        """The statement of a planned shape, listing `columns` of agents (default: the listed ones)."""
        # Statements are cached by shape with bound values, so SQLAlchemy's compiled cache is hit
        # and no aliases are rebuilt per request.
        listed = tuple(columns or self._listed_columns)
        stmt = self._shapes.get((shape, listed))
        if stmt is None:
            stmt = self._among(shape, listed) if shape.among else self._listing(self._build(shape), listed)
            self._shapes[(shape, listed)] = stmt
        return stmt

    def _among(self, shape: _Shape, columns: tuple[str, ...]) -> Select[Any]:
        """Those of a few given agents (a ranked query's candidates) that pass the filters: their
        rows, each filter a condition on the row or a probe of its terms; no driver, no page."""
        listed = _AGENTS.alias("listed")
        stmt = select(*(listed.c[name] for name in columns)).where(
            self._is_among(listed.c.pk), *self._agent_conditions(shape, listed)
        )
        plain = dataclasses.replace(
            shape,
            among=False,
            since=False,
            health=False,
            health_in=False,
            hide_dead=False,
            status=False,
            status_in=False,
        )
        return self._filtered(plain, listed.c.pk, stmt).order_by(listed.c.pk)

    def _is_among(self, pk: ColumnElement[int]) -> ColumnElement[bool]:
        if self._sqlite:
            return pk.in_(bindparam("among", expanding=True))
        # One array rather than a parameter each: PostgreSQL plans it sooner. Its elements as rows
        # (`IN (SELECT unnest(…))`), not `pk = ANY(…)`: PostgreSQL then joins them to the filters'
        # index ranges, where with ANY it walked a probe's range and tested each of its agents
        # against the whole array (1,000 candidates: 70 ms rather than 8).
        return pk.in_(select(func.unnest(bindparam("among", type_=ARRAY(Integer)))).scalar_subquery())

    @staticmethod
    def _listing(page: Select[Any] | CompoundSelect, columns: tuple[str, ...]) -> Select[Any]:
        # The agents' rows come with their pks, in one statement: one round trip, one snapshot.
        # The page is a subquery with a LIMIT, which neither database flattens into the join.
        pks = page.subquery("page")
        listed = _AGENTS.alias("listed")
        return (
            select(*(listed.c[name] for name in columns))
            .join_from(listed, pks, listed.c.pk == next(iter(pks.c)))
            .order_by(listed.c.pk)
        )

    def _build(self, shape: _Shape) -> Select[Any] | CompoundSelect:
        if shape.driver == "any" and self._sqlite:
            # SQLite merges the ordered ranges of a UNION (MERGE (UNION)) only when the union is
            # the statement, with its own ORDER BY and LIMIT; as a subquery under filters it sorts
            # every row of every range first. So every filter goes into each term's range, and the
            # union is the page.
            arms = [self._filtered(shape, *self._any_arm(index)) for index in range(shape.any_ranges)]
            return union(*arms).order_by(literal_column("agent_pk")).limit(bindparam("limit"))
        driver_pk, stmt = self._driver_statement(shape)
        return self._filtered(shape, driver_pk, stmt).order_by(driver_pk).limit(bindparam("limit"))

    def _filtered(self, shape: _Shape, driver_pk: ColumnElement[int], stmt: Select[Any]) -> Select[Any]:
        """`stmt` with every filter but its driver's, each as an index probe of `driver_pk`."""
        after: BindParameter[int] = bindparam("after")
        for index in range(shape.term_probes):
            probe = _TERMS.alias(f"p{index}")
            stmt = stmt.where(
                exists().where(
                    probe.c.agent_pk == driver_pk,
                    probe.c.agent_pk > after,
                    probe.c.kind == bindparam(f"k{index}"),
                    probe.c.value == bindparam(f"v{index}"),
                )
            )
        for index in range(shape.group_probes):
            probe = _TERMS.alias(f"g{index}")
            stmt = stmt.where(
                exists().where(
                    probe.c.agent_pk == driver_pk,
                    probe.c.agent_pk > after,
                    probe.c.kind == bindparam(f"gk{index}"),
                    probe.c.value.in_(bindparam(f"gv{index}", expanding=True)),
                )
            )
        agent_conditions = self._agent_conditions(shape, _AGENTS)
        if agent_conditions:
            stmt = stmt.where(exists().where(_AGENTS.c.pk == driver_pk, _AGENTS.c.pk > after, *agent_conditions))
        return stmt.where(driver_pk > after)

    @staticmethod
    def _agent_conditions(shape: _Shape, agents: Any) -> list[ColumnElement[bool]]:
        conditions = []
        if shape.since:
            conditions.append(agents.c.updated_at >= bindparam("since"))
        if shape.health:
            conditions.append(agents.c.health_state == bindparam("health"))
        if shape.health_in:
            conditions.append(agents.c.health_state.in_(bindparam("health_in", expanding=True)))
        if shape.hide_dead:
            conditions.append(or_(agents.c.health_state != "down", agents.c.health_since >= bindparam("cutoff")))
        if shape.status:
            conditions.append(agents.c.status == bindparam("status"))
        if shape.status_in:
            conditions.append(agents.c.status.in_(bindparam("status_in", expanding=True)))
        return conditions

    def _driver_statement(self, shape: _Shape) -> tuple[ColumnElement[int], Select[Any]]:
        driver = shape.driver
        if driver == "any":
            return self._any_driver(shape.any_ranges)
        if driver == "term":
            table = _TERMS.alias("driver")
            stmt = select(table.c.agent_pk).where(table.c.kind == bindparam("dk"), table.c.value == bindparam("dv"))
            return table.c.agent_pk, stmt
        # An alias: the agent conditions' EXISTS reads `agents` too, and must refer to this row.
        agents = _AGENTS.alias("driver")
        return agents.c.pk, select(agents.c.pk)

    @staticmethod
    def _any_arm(index: int) -> tuple[ColumnElement[int], Select[Any]]:
        """The agents with the `index`th term of the driving any-of group, in pk order (by the
        lookup index)."""
        term = _TERMS.alias(f"any{index}")
        return term.c.agent_pk, select(term.c.agent_pk).where(
            term.c.kind == bindparam(f"ak{index}"), term.c.value == bindparam(f"a{index}")
        )

    def _any_driver(self, ranges: int) -> tuple[ColumnElement[int], Select[Any]]:
        """Agents with any term of the driving group, each once, in pk order (PostgreSQL; SQLite: `_build`).

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
