"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

import random

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from registry.migrate import is_current
from registry.schema import Base
from tests.support.cards import make_card


def test_database_is_at_head_and_matches_the_models(services):
    assert is_current(services.engine)
    with services.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    # The text index tables are created by the migration outside the models on purpose.
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name.startswith(("agent_fts", "agent_search")))]
    diff = [d for d in diff if not (d[0] == "remove_index" and d[1].name.startswith("ix_agent_search_document"))]
    assert diff == []


def test_a_large_profile_comes_back_intact_from_search_and_is_stored_with_lz4_on_postgresql(services, client, auth):  # type: ignore[no-untyped-def]
    # Descriptions that do not repeat, so the profile stays over PostgreSQL's ~2 KB compression
    # threshold once compressed and is stored out of line.
    words = [f"w{n * 7919 % 10007}" for n in range(1500)]
    card = make_card("Big Agent", tags=["large-profile"], skills=4, description=" ".join(words))
    response = client.post("/v1/agents", json={"card": card, "cardUrl": "https://big.example.com/card.json"}, headers=auth)
    assert response.status_code == 201, response.get_json()

    listed = client.get("/v1/agents?tag=large-profile").get_json()["items"]
    assert [item["description"] for item in listed] == [card["description"]]
    if services.engine.dialect.name == "postgresql":
        with services.engine.connect() as conn:
            lz4 = conn.scalar(text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"))
            method = conn.scalar(text("SELECT pg_column_compression(profile) FROM agents"))
        assert method == ("lz4" if lz4 else "pglz")


def test_sqlite_keeps_the_terms_clustered_without_rowids_and_the_rebuild_keeps_every_term(services, client, auth):  # type: ignore[no-untyped-def]
    from registry.migrate import downgrade, upgrade

    for n, tags in enumerate([["rebuilt", "kept"], ["rebuilt"]]):
        body = {"card": make_card(f"Terms {n}", tags=tags), "cardUrl": f"https://terms{n}.example.com/card.json"}
        assert client.post("/v1/agents", json=body, headers=auth).status_code == 201
    before = client.get("/v1/agents?tag=rebuilt&tag=kept&match=any").get_json()["items"]

    downgrade(services.engine, "0010_tag_counts")
    upgrade(services.engine)

    assert client.get("/v1/agents?tag=rebuilt&tag=kept&match=any").get_json()["items"] == before
    assert len(before) == 2
    if services.engine.dialect.name == "sqlite":
        with services.engine.connect() as conn:
            ddl = conn.scalar(text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'agent_terms'"))
        assert ddl.rstrip().endswith("WITHOUT ROWID")


def test_a_migration_that_fails_halfway_leaves_the_database_as_it_was_and_can_be_retried(services, client, auth):  # type: ignore[no-untyped-def]
    import pytest
    from sqlalchemy import event, inspect

    from registry.migrate import current_revisions, downgrade, upgrade

    body = {"card": make_card("Before", tags=["retried"]), "cardUrl": "https://before.example.com/card.json"}
    assert client.post("/v1/agents", json=body, headers=auth).status_code == 201
    downgrade(services.engine, "0009_profile_lz4")
    revisions = current_revisions(services.engine)

    def fail_the_backfill(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        if statement.startswith("INSERT INTO tag_counts"):  # 0010: after it created its two tables
            raise RuntimeError("the disk filled up")

    event.listen(services.engine, "before_cursor_execute", fail_the_backfill)
    try:
        with pytest.raises(RuntimeError, match="disk filled up"):
            upgrade(services.engine)
    finally:
        event.remove(services.engine, "before_cursor_execute", fail_the_backfill)
    assert current_revisions(services.engine) == revisions
    assert not {"tag_counts", "tag_count_deltas"} & set(inspect(services.engine).get_table_names())

    upgrade(services.engine)
    assert client.get("/v1/tags?prefix=retried").get_json()["items"] == [{"tag": "retried", "count": 1}]


def test_0012_drops_the_terms_key_and_rebuilds_postgresql_text_vectors_from_the_documents(services, client, auth):  # type: ignore[no-untyped-def]
    from sqlalchemy import inspect

    from registry.migrate import downgrade, upgrade

    body = {"card": make_card("Vector Agent", tags=["vectors"]), "cardUrl": "https://vector.example.com/card.json"}
    assert client.post("/v1/agents", json=body, headers=auth).status_code == 201
    downgrade(services.engine, "0011_sqlite_terms_without_rowid")
    assert [key["referred_table"] for key in inspect(services.engine).get_foreign_keys("agent_terms")] == ["agents"]
    postgresql = services.engine.dialect.name == "postgresql"
    if postgresql:  # a document as releases before 0012 stored it, vectorised by to_tsvector
        with services.engine.begin() as conn:
            conn.execute(text("UPDATE agent_search SET document = 'Vector Agent: Ünïcode d01-tag03 runs'"))
        assert client.get("/v1/agents?q=unicode").get_json()["items"] == []  # to_tsvector keeps diacritics

    upgrade(services.engine)

    assert inspect(services.engine).get_foreign_keys("agent_terms") == []
    assert [a["name"] for a in client.get("/v1/agents?tag=vectors").get_json()["items"]] == ["Vector Agent"]
    found = [query for query in ("vector", "unicode", "tag03", "runs") if client.get(f"/v1/agents?q={query}").get_json()["items"]]
    assert found == (["vector", "unicode", "tag03", "runs"] if postgresql else ["vector"])


def test_0013_analyze_of_agents_keeps_statistics_only_for_what_queries_filter_on(services, client, auth):  # type: ignore[no-untyped-def]
    from registry.migrate import downgrade, upgrade

    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL planner statistics")
    for n in range(3):
        body = {"card": make_card(f"Stats Agent {n}", tags=["stats"]), "cardUrl": f"https://stats{n}.example.com/card.json"}
        assert client.post("/v1/agents", json=body, headers=auth).status_code == 201
    with services.engine.begin() as conn:
        conn.execute(text("ANALYZE agents"))
        analyzed = set(conn.scalars(text("SELECT attname FROM pg_stats WHERE tablename = 'agents' AND schemaname = current_schema()")))
    assert {"status", "updated_at", "health_state", "next_probe_at", "card_url", "owner_id"} <= analyzed
    assert not {"profile", "description", "interfaces", "tags"} & analyzed

    def targets() -> dict[str, int]:
        with services.engine.connect() as conn:
            return dict(conn.execute(text("SELECT attname, attstattarget FROM pg_attribute "
                                          "WHERE attrelid = 'agents'::regclass AND attname IN ('profile', 'status')")).all())

    downgrade(services.engine, "0012_cheaper_index_writes")
    assert targets() == {"profile": -1, "status": -1}
    upgrade(services.engine)
    assert targets() == {"profile": 0, "status": -1}


def test_0014_compresses_an_agents_values_and_its_raw_card_with_lz4(services, client, auth):  # type: ignore[no-untyped-def]
    from registry.migrate import downgrade, upgrade

    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL compression")
    rng = random.Random(7)
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa quebec".split()
    description = " ".join(rng.choice(words) for _ in range(400))  # compressed as well as the profile

    def register(n: int) -> tuple[str, str]:
        card = make_card(f"Packed Agent {n}", tags=["packed"], skills=5, description=description)
        body = {"card": card, "cardUrl": f"https://packed{n}.example.com/card.json"}
        assert client.post("/v1/agents", json=body, headers=auth).status_code == 201
        with services.engine.connect() as conn:
            return tuple(conn.execute(text(
                "SELECT pg_column_compression(a.description), pg_column_compression(c.raw) FROM agents a "
                "JOIN agent_cards c ON c.agent_pk = a.pk WHERE a.name = :name"), {"name": f"Packed Agent {n}"}).one())

    downgrade(services.engine, "0013_payload_statistics")
    assert register(0) == ("pglz", "pglz")
    upgrade(services.engine)
    with services.engine.connect() as conn:
        lz4 = conn.scalar(text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"))
    assert register(1) == (("lz4", "lz4") if lz4 else ("pglz", "pglz"))
    assert [a["description"] for a in client.get("/v1/agents?tag=packed").get_json()["items"]] == [description] * 2


def test_0015_leaves_the_search_tables_analyses_and_insert_vacuums_to_the_job(services):  # type: ignore[no-untyped-def]
    from registry.migrate import downgrade, upgrade
    from registry.catalog.planner_statistics import SEARCH_TABLES

    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL autovacuum")

    def options() -> dict[str, list[str]]:
        with services.engine.connect() as conn:
            return {table: sorted(conn.scalar(text("SELECT reloptions FROM pg_class WHERE oid = CAST(:t AS regclass)"), {"t": table}) or [])
                    for table in ("agents", "agent_terms", "agent_search", "agent_cards")}

    left_to_the_job = ["autovacuum_analyze_scale_factor=2", "autovacuum_vacuum_insert_scale_factor=2"]
    assert options() == {**{table: left_to_the_job for table in SEARCH_TABLES}, "agent_cards": []}  # dead rows: autovacuum's as before
    downgrade(services.engine, "0014_lz4_payload")
    assert options() == {table: [] for table in ("agents", "agent_terms", "agent_search", "agent_cards")}
    upgrade(services.engine)
    assert options()["agent_terms"] == left_to_the_job
