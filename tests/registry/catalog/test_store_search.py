"""How the store runs a search: which index drives it, and that SQLite merges the ranges of
any-of tags; searches planned for their values on PostgreSQL."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import text

from registry.catalog import AgentQuery, store_search
from tests.support.cards import make_card


def _register(services, actor, tag: str, n: int) -> None:  # type: ignore[no-untyped-def]
    for i in range(n):
        services.catalog.register_card(
            actor, make_card(f"Agent {tag} {i}", tags=[tag]), f"https://{tag}{i}.example/c.json"
        )


def _plan(services, query: AgentQuery):  # type: ignore[no-untyped-def]
    """The shape and parameters of the query's page statement."""
    store = services.search._store
    filters = services.search._filters(query)
    with store.engine.connect() as conn:
        counts = {term: store._stats.count(conn, *term) for term in filters.counted_terms()}
    return store._search.plan(filters, counts)


def test_searches_are_planned_for_their_values_every_time(services, actor):  # type: ignore[no-untyped-def]
    """PostgreSQL: a prepared search would settle on one generic plan for all tags and words."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    _register(services, actor, "weather", 3)
    for _ in range(12):
        assert len(services.search.search(AgentQuery(tags=("weather",))).agents) == 3
    with services.engine.connect() as conn:
        assert conn.execute(text("SELECT name FROM pg_prepared_statements")).all() == []


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


def test_common_any_of_tags_with_text_are_driven_by_the_text_index(services, actor, monkeypatch):
    """A full-text probe of one agent reads the word's whole doclist; common tags must not drive it."""
    monkeypatch.setattr(store_search, "RARE_TERM", 2)
    _register(services, actor, "popular", 4)
    shape, _ = _plan(services, AgentQuery(tags=("popular",), match_any=True, text="agent"))
    assert (shape.driver, shape.any_probe) == ("text", True)
    shape, _ = _plan(services, AgentQuery(tags=("popular",), match_any=True))
    assert shape.driver == "any"


def test_any_of_tags_on_sqlite_merge_their_ordered_ranges(services, actor):
    """SQLite: a match=any page merges one ordered range per tag and stops after its last row,
    rather than reading and sorting every agent with any of the tags."""
    if services.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL merges with Merge Append (see test_search_pages for the results)")
    _register(services, actor, "red", 2)
    shape, params = _plan(services, AgentQuery(tags=("red", "blue", "green"), match_any=True))
    statement = services.search._store._search._statement(shape)
    compiled = statement.compile(services.engine)
    values = compiled.construct_params({**params, "after": 0, "limit": 51})
    with services.engine.connect() as conn:
        plan = conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + compiled.string, tuple(values[name] for name in compiled.positiontup)
        ).all()
    details = [row[-1] for row in plan]
    assert "MERGE (UNION)" in details and not any("UNION USING TEMP B-TREE" in d for d in details)
