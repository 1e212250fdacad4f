"""How the store runs a search: which index drives it, that a ranked query's candidates are
checked against the filters, and that SQLite merges the ranges of any-of tags; searches planned
for their values on PostgreSQL."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import text, update

from registry.catalog import Agent, AgentQuery
from registry.catalog.store_search import SearchFilters
from tests.support.cards import make_card


def _register(services, actor, tag: str, n: int) -> None:  # type: ignore[no-untyped-def]
    for i in range(n):
        services.catalog.register_card(
            actor, make_card(f"Agent {tag} {i}", tags=[tag]), f"https://{tag}{i}.example/c.json"
        )


def _counted(services, query: AgentQuery):  # type: ignore[no-untyped-def]
    """The query's filters, and how many agents hold each of their terms."""
    store = services.search._store
    filters = services.search._filters(query)
    with store.engine.connect() as conn:
        return filters, {term: store._stats.count(conn, *term) for term in filters.counted_terms()}


def _plan(services, query: AgentQuery):  # type: ignore[no-untyped-def]
    """The shape and parameters of the query's page statement."""
    return services.search._store._search.plan(*_counted(services, query))


def test_searches_are_planned_for_their_values_every_time(services, actor):  # type: ignore[no-untyped-def]
    """PostgreSQL: a prepared search would settle on one generic plan for all tags and words. The
    filters of a ranked search are planned like any search's (its other statements may be prepared)."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    _register(services, actor, "weather", 3)
    for _ in range(12):
        assert len(services.search.search(AgentQuery(tags=("weather",))).agents) == 3
        assert len(services.search.search(AgentQuery(text="weather", tags=("weather",))).agents) == 3
    with services.engine.connect() as conn:
        prepared = conn.execute(text("SELECT statement FROM pg_prepared_statements")).scalars().all()
    assert not [statement for statement in prepared if "agent_terms" in statement]


def test_pages_of_every_driver_find_the_same_agents(services, actor):  # type: ignore[no-untyped-def]
    for i in range(12):
        tags = [t for t, every in (("red", 2), ("blue", 3), ("green", 4)) if i % every == 0] or ["plain"]
        services.catalog.register_card(
            actor,
            make_card(f"Agent {i}", tags=tags, skills=1 + i % 3, streaming=i % 3 == 1),
            f"https://colors{i}.example/c.json",
        )
    queries = [
        AgentQuery(tags=("red",), limit=2),
        AgentQuery(tags=("red", "blue")),
        AgentQuery(tags=("blue", "green"), limit=1),
        AgentQuery(tags=("red", "blue", "green")),
        AgentQuery(tags=("plain",), capabilities=("streaming",)),
        AgentQuery(tags=("red", "blue"), match_any=True, limit=3),
        AgentQuery(text="agent", limit=5),
        AgentQuery(status="deprecated"),
        AgentQuery(),
    ]

    def pages(query: AgentQuery) -> list[str]:
        found, cursor = [], None
        while True:
            page = services.search.search(dataclasses.replace(query, cursor=cursor))
            found.extend(row.id for row in page.agents)
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    assert [len(pages(q)) for q in queries] == [6, 2, 1, 1, 2, 8, 12, 0, 12]


def test_a_ranked_querys_candidates_are_checked_against_every_filter(services, actor):  # type: ignore[no-untyped-def]
    """Ranked search finds candidates by meaning and words, then asks the store which of them pass
    the exact filters: only those, whatever index would have driven the search without them."""
    _register(services, actor, "red", 3)
    _register(services, actor, "blue", 3)
    store = services.search._store
    everyone = [row.pk for row in store.search(SearchFilters([], []), 0, 100, ("pk",))]
    candidates = everyone[1::2]  # red 1, blue 0, blue 2
    red = store.search(SearchFilters([("tag", "red")], [], among=candidates), 0, 100, ("pk",))
    assert [row.pk for row in red] == [everyone[1]]
    any_of = store.search(SearchFilters([], ["red", "green"], among=candidates), 0, 100, ("pk",))
    assert [row.pk for row in any_of] == [everyone[1]]
    assert _plan(services, AgentQuery(tags=("red",)))[0].driver == "term"
    among = SearchFilters([("tag", "red")], [], among=candidates)
    assert store._search.plan(among, {("tag", "red"): 3})[0].driver == "all"  # the few candidates, each probed


def test_agent_filters_hold_when_no_index_drives_the_search(services, actor):  # type: ignore[no-untyped-def]
    """status=any leaves no term to drive the search: the agents table does, and the conditions on
    each agent's row (health, update time) still apply to that agent."""
    _register(services, actor, "red", 3)
    red = [row.id for row in services.search.search(AgentQuery(tags=("red",))).agents]
    with services.engine.begin() as conn:
        conn.execute(update(Agent).where(Agent.id == red[1]).values(health_state="up"))
    assert [row.id for row in services.search.search(AgentQuery(status="any", health="up")).agents] == [red[1]]
    assert _plan(services, AgentQuery(status="any", health="up"))[0].driver == "all"


def test_any_of_tags_on_sqlite_merge_their_ordered_ranges(services, actor):
    """SQLite: a match=any page merges one ordered range per tag and stops after its last row,
    rather than reading and sorting every agent with any of the tags."""
    if services.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL merges with Merge Append (see test_search_pages for the results)")
    _register(services, actor, "red", 2)
    shape, params = _plan(services, AgentQuery(tags=("red", "blue", "green"), match_any=True))
    statement = services.search._store._search.statement(shape)
    compiled = statement.compile(services.engine)
    values = compiled.construct_params({**params, "after": 0, "limit": 51})
    with services.engine.connect() as conn:
        plan = conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + compiled.string, tuple(values[name] for name in compiled.positiontup)
        ).all()
    details = [row[-1] for row in plan]
    assert "MERGE (UNION)" in details and not any("UNION USING TEMP B-TREE" in d for d in details)
