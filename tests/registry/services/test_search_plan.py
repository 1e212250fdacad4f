"""The search planner's term counts: a term never seen costs the request only as much counting as
the choice of plan needs."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from registry.services import search_plan
from registry.services.discovery import AgentQuery
from registry.services.search_plan import TermStats
from tests.support.cards import make_card
from tests.support.waiting import wait_for


def _register(services, actor, tag: str, n: int) -> None:
    for i in range(n):
        services.catalog.register_card(actor, make_card(f"Agent {tag} {i}", tags=[tag]), f"https://{tag}{i}.example/c.json")


def test_a_new_common_term_is_counted_past_rare_at_once_and_in_full_in_the_background(services, actor, monkeypatch):
    monkeypatch.setattr(search_plan, "RARE_TERM", 2)
    _register(services, actor, "common", 5)
    stats = TermStats(sessions=services.sessions)
    with services.sessions() as session:
        assert stats.count(session, "tag", "common") == 3  # more than rare: enough to plan with
    assert wait_for(lambda: stats._cache[("tag", "common")][1] == 5)
    with services.sessions() as session:
        assert stats.count(session, "tag", "common") == 5


def test_a_new_rare_term_is_counted_exactly_at_once(services, actor, monkeypatch):
    monkeypatch.setattr(search_plan, "RARE_TERM", 2)
    _register(services, actor, "rare", 2)
    stats = TermStats(sessions=services.sessions)
    with services.sessions() as session:
        assert stats.count(session, "tag", "rare") == 2
        assert stats.count(session, "tag", "unknown") == 0
    assert not stats._due and not stats._refreshing


def test_search_statements_are_planned_for_their_values_every_time(services, actor):
    """PostgreSQL: a prepared search would settle on one generic plan for all tags and words."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    _register(services, actor, "weather", 2)
    for _ in range(12):
        assert len(services.discovery.search(AgentQuery(tags=("weather",))).agents) == 2
    with services.engine.connect() as conn:
        prepared = conn.execute(text("SELECT statement FROM pg_prepared_statements")).scalars().all()
        conn.execute(text("SELECT 1"))  # the connection is back in a transaction as usual
        assert conn.in_transaction()
    assert not [statement for statement in prepared if "agent_terms" in statement]


def _plan(services, query: AgentQuery):
    discovery = services.discovery
    with services.sessions() as session:
        return discovery._planner._plan(session, discovery._filters(query))


def test_common_any_of_tags_with_text_are_driven_by_the_text_index(services, actor, monkeypatch):
    """A full-text probe of one agent reads the word's whole doclist; common tags must not drive it."""
    monkeypatch.setattr(search_plan, "RARE_TERM", 2)
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
    statement = services.discovery._planner._statement(shape)
    compiled = statement.compile(services.engine)
    values = compiled.construct_params({**params, "after": 0, "limit": 51})
    with services.engine.connect() as conn:
        plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + compiled.string,
                                    tuple(values[name] for name in compiled.positiontup)).all()
    details = [row[-1] for row in plan]
    assert "MERGE (UNION)" in details and not any("UNION USING TEMP B-TREE" in d for d in details)
