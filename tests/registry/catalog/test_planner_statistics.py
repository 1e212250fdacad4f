"""The `catalog-statistics` job: on PostgreSQL a search table is analyzed once enough of it changed,
and only then; on SQLite there is nothing to do."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from registry.catalog.planner_statistics import PlannerStatistics
from tests.support.cards import make_card
from tests.support.waiting import wait_for


def _import(services, actor, count: int) -> None:  # type: ignore[no-untyped-def]
    items = [{"card": make_card(f"Agent {n}", tags=[f"t{n % 7}", "common"]), "cardUrl": f"https://a{n}.example.com/c.json"}
             for n in range(count)]
    assert all(o.agent_id for o in services.catalog.import_cards(actor, items))


def _modified_since_analysis(services, table: str) -> int:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return int(conn.scalar(text("SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = :t"), {"t": table}))


def _wait_for_counters(services, table: str, at_least: int) -> None:  # type: ignore[no-untyped-def]
    services.engine.dispose()  # a backend reports its row counts when it ends
    assert wait_for(lambda: _modified_since_analysis(services, table) >= at_least, 15), "PostgreSQL did not report the rows"


def test_search_tables_are_analyzed_once_enough_of_them_changed(services, actor) -> None:  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL planner statistics")
    statistics = PlannerStatistics(services.engine, floor=100, fraction=0.5)
    _import(services, actor, 40)
    _wait_for_counters(services, "agent_terms", 100)
    assert statistics.refresh() >= 1
    assert _modified_since_analysis(services, "agent_terms") == 0
    with services.engine.connect() as conn:
        analyzed = conn.scalar(text("SELECT reltuples FROM pg_class WHERE relname = 'agent_terms'"))
    assert analyzed >= 100  # the planner now knows the rows are there
    assert statistics.refresh() == 0  # nothing changed since


def test_nothing_to_do_on_sqlite(services, actor) -> None:  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "sqlite":
        pytest.skip("SQLite")
    _import(services, actor, 3)
    assert PlannerStatistics(services.engine, floor=0, fraction=0).refresh() == 0


def _all_visible(services, table: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        visible, pages = conn.execute(text("SELECT relallvisible, relpages FROM pg_class WHERE relname = :t"), {"t": table}).one()
    return int(visible), int(pages)


def test_search_tables_that_grew_are_vacuumed_so_index_only_scans_skip_the_table(services, actor) -> None:  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL visibility map")
    statistics = PlannerStatistics(services.engine, floor=100, fraction=0.5, vacuum_fraction=0.1)
    _import(services, actor, 40)
    _wait_for_counters(services, "agent_terms", 100)
    assert statistics.refresh() >= 1
    visible, pages = _all_visible(services, "agent_terms")
    assert pages > 0 and visible == pages  # every page marked all-visible: no table reads for the index
    with services.engine.connect() as conn:
        grown = conn.scalar(text("SELECT n_ins_since_vacuum FROM pg_stat_user_tables WHERE relname = 'agent_terms'"))
    assert grown == 0
    assert statistics.refresh() == 0  # nothing new since


def _analyses(services, table: str) -> int:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return int(conn.scalar(text("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = :t"), {"t": table}))


def test_a_table_busy_with_writes_is_analyzed_once_they_stop_or_it_waited_long_enough(services, actor) -> None:  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL planner statistics")
    now, before = [0.0], _analyses(services, "agent_terms")

    def analyses() -> int:
        return _analyses(services, "agent_terms") - before

    statistics = PlannerStatistics(services.engine, floor=100, fraction=0.5, wait=60, clock=lambda: now[0])
    _import(services, actor, 40)
    _wait_for_counters(services, "agent_terms", 100)
    assert statistics.refresh() >= 1  # first look, no statistics yet: analyzed at once
    assert analyses() == 1

    def write(count: int, start: int) -> None:  # a bulk import goes on
        items = [{"card": make_card(f"Bulk {n}", tags=[f"t{n % 7}"]), "cardUrl": f"https://bulk{n}.example.com/c.json"}
                 for n in range(start, start + count)]
        assert all(o.agent_id for o in services.catalog.import_cards(actor, items))
        _wait_for_counters(services, "agent_terms", 0)

    writes_before = _modified_since_analysis(services, "agent_terms")
    write(40, 0)
    assert wait_for(lambda: _modified_since_analysis(services, "agent_terms") >= writes_before + 100, 15)
    now[0] = 10
    statistics.refresh()
    assert analyses() == 1  # stale, but busy: left for now
    write(40, 40)
    now[0] = 20
    statistics.refresh()
    assert analyses() == 1  # still busy, waited 10 s of 60
    now[0] = 30
    statistics.refresh()
    assert analyses() == 2  # the writes stopped: analyzed

    write(40, 80)
    write(40, 120)
    now[0] = 40
    statistics.refresh()
    assert analyses() == 2  # busy again
    write(40, 160)
    now[0] = 100
    statistics.refresh()  # busy since 40 s: waited its 60 s
    assert analyses() == 3
