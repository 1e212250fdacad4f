"""The search planner's term counts: a term never seen costs the request only as much counting as
the choice of plan needs."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt

import pytest
from sqlalchemy import text

from registry.db import POOL_OVERFLOW, POOL_SIZE
from registry.catalog import search_plan
from registry.catalog.search import AgentQuery
from registry.catalog.search_plan import TermStats
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


def _prepared(conn) -> list[tuple[str, int, int]]:
    """(statement, generic plans, custom plans) prepared on this connection's session that read agent_terms."""
    rows = conn.execute(text("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")).all()
    return [tuple(row) for row in rows if "agent_terms" in row[0]]


def test_searches_with_a_common_term_are_planned_for_their_values_every_time(services, actor, monkeypatch):
    """PostgreSQL: a prepared search would settle on one generic plan for all tags and words."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    monkeypatch.setattr(search_plan, "RARE_TERM", 2)
    _register(services, actor, "weather", 3)
    for _ in range(12):
        assert len(services.discovery.search(AgentQuery(tags=("weather",))).agents) == 3
    with services.engine.connect() as conn:
        prepared = _prepared(conn)
        conn.execute(text("SELECT 1"))  # the connection is back in a transaction as usual
        assert conn.in_transaction()
    assert prepared == []
    with services.discovery._generic.connect() as conn:
        assert _prepared(conn) == []  # and the generic plans' connections were not asked


def test_searches_whose_terms_are_all_rare_run_one_generic_plan(services, actor):
    """PostgreSQL: with every term of at most RARE_TERM agents, any plan reads little, and planning
    would cost more than running; the statement is prepared once and its generic plan reused."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    _register(services, actor, "weather", 2)
    _register(services, actor, "travel", 1)
    for _ in range(12):
        assert len(services.discovery.search(AgentQuery(tags=("weather",))).agents) == 2
        assert len(services.discovery.search(AgentQuery(tags=("travel",))).agents) == 1
    with services.discovery._generic.connect() as conn:
        [(statement, generic, custom)] = _prepared(conn)
    assert (generic, custom) == (24, 0) and "LIMIT" in statement
    with services.engine.connect() as conn:
        assert _prepared(conn) == []


def test_generic_and_value_planned_searches_find_the_same_pages(services, actor, monkeypatch):
    if services.engine.dialect.name != "postgresql":
        pytest.skip("SQLite plans every search the same way")
    for i in range(12):
        tags = [t for t, every in (("red", 2), ("blue", 3), ("green", 4)) if i % every == 0] or ["plain"]
        services.catalog.register_card(actor, make_card(f"Agent {i}", tags=tags, skills=1 + i % 3, streaming=i % 3 == 1),
                                       f"https://colors{i}.example/c.json")
    queries = [AgentQuery(tags=("red",), limit=2), AgentQuery(tags=("red", "blue")), AgentQuery(tags=("blue", "green"), limit=1),
               AgentQuery(tags=("red", "blue", "green")), AgentQuery(tags=("plain",), capabilities=("streaming",)),
               AgentQuery(status="deprecated"), AgentQuery()]

    def pages(query: AgentQuery) -> list[list[str]]:
        found, cursor = [], None
        while True:
            page = services.discovery.search(dataclasses.replace(query, cursor=cursor))
            found.append([row.id for row in page.agents])
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    generic = [pages(q) for q in queries]
    with services.discovery._generic.connect() as conn:
        assert _prepared(conn)  # the generic plans were used
    monkeypatch.setattr(services.discovery._planner, "_generic", None)
    assert [pages(q) for q in queries] == generic
    assert [len(sum(p, [])) for p in generic] == [6, 2, 1, 1, 2, 0, 12]


def _plan(services, query: AgentQuery):
    discovery = services.discovery
    with services.sessions() as session:
        return discovery._planner._plan(session, discovery._filters(query))


def test_common_any_of_tags_with_text_are_driven_by_the_text_index(services, actor, monkeypatch):
    """A full-text probe of one agent reads the word's whole doclist; common tags must not drive it."""
    monkeypatch.setattr(search_plan, "RARE_TERM", 2)
    _register(services, actor, "popular", 4)
    shape, _, _ = _plan(services, AgentQuery(tags=("popular",), match_any=True, text="agent"))
    assert (shape.driver, shape.any_probe) == ("text", True)
    shape, _, _ = _plan(services, AgentQuery(tags=("popular",), match_any=True))
    assert shape.driver == "any"


def test_any_of_tags_on_sqlite_merge_their_ordered_ranges(services, actor):
    """SQLite: a match=any page merges one ordered range per tag and stops after its last row,
    rather than reading and sorting every agent with any of the tags."""
    if services.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL merges with Merge Append (see test_search_pages for the results)")
    _register(services, actor, "red", 2)
    shape, params, _ = _plan(services, AgentQuery(tags=("red", "blue", "green"), match_any=True))
    statement = services.discovery._planner._statement(shape)
    compiled = statement.compile(services.engine)
    values = compiled.construct_params({**params, "after": 0, "limit": 51})
    with services.engine.connect() as conn:
        plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + compiled.string,
                                    tuple(values[name] for name in compiled.positiontup)).all()
    details = [row[-1] for row in plan]
    assert "MERGE (UNION)" in details and not any("UNION USING TEMP B-TREE" in d for d in details)


def test_only_searches_by_rare_terms_alone_take_the_generic_plan(services, actor, monkeypatch):
    """Text, any-of tags, a time or health filter, or a common term: the plan depends on the values."""
    monkeypatch.setattr(search_plan, "RARE_TERM", 3)
    _register(services, actor, "rare", 2)
    _register(services, actor, "common", 4)
    since = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    expected = {
        AgentQuery(tags=("rare",)): True,
        AgentQuery(tags=("rare",), capabilities=("streaming",), status="any"): True,
        AgentQuery(tags=("rare", "common")): False,
        AgentQuery(tags=("rare",), text="agent"): False,
        AgentQuery(tags=("rare", "common"), match_any=True): False,
        AgentQuery(tags=("rare",), updated_since=since): False,
        AgentQuery(tags=("rare",), health="up"): False,
    }
    assert {query: _plan(services, query)[2] for query in expected} == expected


def test_reads_of_agents_answer_while_writes_hold_every_connection_of_their_pool(services, actor):
    """PostgreSQL: searches and reads of an agent have connections of their own
    (`registry.db.separate_reads`), which never carry the write path's large statements; a write
    pool held to its last connection does not hold them up either."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("on SQLite reads and writes share one file, and no network")
    _register(services, actor, "weather", 2)
    [agent_id, _] = [a.id for a in services.discovery.search(AgentQuery(tags=("weather",))).agents]
    held = [services.engine.connect() for _ in range(POOL_SIZE + POOL_OVERFLOW)]
    reads = concurrent.futures.ThreadPoolExecutor(1)
    try:
        answer = reads.submit(lambda: (len(services.discovery.search(AgentQuery(text="weather")).agents),
                                       services.discovery.get(agent_id).id, services.discovery.versions(agent_id)[0]["version"]))
        assert answer.result(timeout=10) == (2, agent_id, 1)  # the write pool would have made it wait 30 s
    finally:
        for conn in held:
            conn.close()
        reads.shutdown()
