"""The baseline migration builds exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, create_engine, event, inspect, text

import migrations
from registry.migrate import UnknownSchemaRevision, current_revisions, downgrade, is_current, upgrade
from registry.schema import Base
from tests.support.cards import make_card

MIGRATIONS = Path(migrations.__file__).parent
APPLICATION = {"registry", "signing", "cli"}
LZ4_AVAILABLE = text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")


def differences_from_the_models(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        diff = compare_metadata(context, Base.metadata)
    # The text index tables are created by the migration outside the models on purpose.
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name.startswith(("agent_fts", "agent_search")))]
    diff = [d for d in diff if not (d[0] == "remove_index" and d[1].name.startswith("ix_agent_search_document"))]
    # On PostgreSQL an embedding's marker defaults to the writing transaction's id, a default the
    # migration gives that database only (SQLite's markers are written by the registry).
    return [d for d in diff if not (isinstance(d, list) and d[0][0] == "modify_default" and d[0][2:4] == _MARKER)]


_MARKER = ("agent_embeddings", "marker")


def fresh_auth(services) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A token for a schema built anew: the fixture's principal went with the old tables."""
    return {"Authorization": f"Bearer {services.tokens.create('carol', ['agents:write']).token}"}


def register(client, auth, name: str, **card) -> None:  # type: ignore[no-untyped-def]
    body = {
        "card": make_card(name, **card),
        "cardUrl": f"https://{name.lower().replace(' ', '-')}.example.com/card.json",
    }
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.get_json()


def test_database_is_at_the_baseline_and_matches_the_models_types_and_defaults_included(services):  # type: ignore[no-untyped-def]
    assert is_current(services.engine)
    assert current_revisions(services.engine) == {"0001_baseline"}
    assert differences_from_the_models(services.engine) == []


def test_downgrading_the_baseline_removes_everything_and_upgrading_again_builds_the_models(services, client, auth):  # type: ignore[no-untyped-def]
    register(client, auth, "Before Downgrade", tags=["gone"])
    downgrade(services.engine, "base")
    try:
        assert set(inspect(services.engine).get_table_names()) <= {"alembic_version"}
        assert current_revisions(services.engine) == frozenset()
    finally:
        upgrade(services.engine)

    assert differences_from_the_models(services.engine) == []
    assert client.get("/v1/agents?tag=gone").get_json()["items"] == []
    register(client, fresh_auth(services), "After Upgrade", tags=["back"])
    assert [a["name"] for a in client.get("/v1/agents?q=upgrade").get_json()["items"]] == ["After Upgrade"]


def test_a_migration_that_fails_halfway_leaves_the_database_as_it_was_and_can_be_retried(services, client):  # type: ignore[no-untyped-def]
    downgrade(services.engine, "base")
    tables = inspect(services.engine).get_table_names()

    def fail_at_the_relay_tables(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        if statement.lstrip().startswith("CREATE TABLE relay_messages"):  # after the catalog's tables
            raise RuntimeError("the disk filled up")

    event.listen(services.engine, "before_cursor_execute", fail_at_the_relay_tables)
    try:
        with pytest.raises(RuntimeError, match="disk filled up"):
            upgrade(services.engine)
    finally:
        event.remove(services.engine, "before_cursor_execute", fail_at_the_relay_tables)
    try:
        assert current_revisions(services.engine) == frozenset()
        assert inspect(services.engine).get_table_names() == tables
    finally:
        upgrade(services.engine)

    register(client, fresh_auth(services), "Retried", tags=["retried"])
    assert client.get("/v1/tags?prefix=retried").get_json()["items"] == [{"tag": "retried", "count": 1}]


def test_a_database_of_an_earlier_development_build_is_refused_and_left_as_it_was(tmp_path):  # type: ignore[no-untyped-def]
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('0015_search_tables_maintenance')"))

    with pytest.raises(UnknownSchemaRevision, match="0015_search_tables_maintenance.*recreate"):
        upgrade(engine)
    assert not is_current(engine)
    assert inspect(engine).get_table_names() == ["alembic_version"]


def test_the_cli_says_so_in_one_line_and_exits_1(tmp_path):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from cli.main import cli

    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('0015_search_tables_maintenance')"))
    env = {"AGENTDEX_DATABASE_URL": f"sqlite:///{tmp_path / 'old.db'}", "AGENTDEX_SECRET_KEY": "x" * 32}
    result = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "recreate" in result.output
    assert "Traceback" not in result.output


def test_the_versions_folder_holds_exactly_the_baseline():
    revisions = sorted(path.name for path in (MIGRATIONS / "versions").glob("*.py") if path.name != "__init__.py")
    assert revisions == ["0001_baseline.py"]


@pytest.mark.parametrize("path", sorted(MIGRATIONS.rglob("*.py")), ids=lambda p: str(p.relative_to(MIGRATIONS)))
def test_no_file_under_migrations_imports_the_application(path: Path):
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & APPLICATION


def test_a_large_profile_comes_back_intact_from_search_and_is_stored_with_lz4_on_postgresql(services, client, auth):  # type: ignore[no-untyped-def]
    # Descriptions that do not repeat, so the profile stays over PostgreSQL's ~2 KB compression
    # threshold once compressed and is stored out of line.
    words = [f"w{n * 7919 % 10007}" for n in range(1500)]
    description = " ".join(words)
    register(client, auth, "Big Agent", tags=["large-profile"], skills=4, description=description)

    listed = client.get("/v1/agents?tag=large-profile").get_json()["items"]
    assert [item["description"] for item in listed] == [description]
    if services.engine.dialect.name == "postgresql":
        with services.engine.connect() as conn:
            lz4 = conn.scalar(LZ4_AVAILABLE)
            method = conn.scalar(text("SELECT pg_column_compression(profile) FROM agents"))
        assert method == ("lz4" if lz4 else "pglz")


def test_an_agents_values_and_its_raw_card_are_compressed_with_lz4_on_postgresql(services, client, auth):  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL compression")
    rng = random.Random(7)
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa quebec".split()
    description = " ".join(rng.choice(words) for _ in range(400))  # compressed as well as the profile
    register(client, auth, "Packed Agent", tags=["packed"], skills=5, description=description)

    with services.engine.connect() as conn:
        lz4 = conn.scalar(LZ4_AVAILABLE)
        methods = conn.execute(
            text(
                "SELECT pg_column_compression(a.description), pg_column_compression(c.raw) FROM agents a "
                "JOIN agent_cards c ON c.agent_pk = a.pk WHERE a.name = 'Packed Agent'"
            )
        ).one()
    assert tuple(methods) == (("lz4", "lz4") if lz4 else ("pglz", "pglz"))
    assert [a["description"] for a in client.get("/v1/agents?tag=packed").get_json()["items"]] == [description]


def test_autovacuum_of_the_search_tables_is_left_to_the_operator_on_postgresql(services):  # type: ignore[no-untyped-def]
    if services.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL autovacuum")
    with services.engine.connect() as conn:
        options = {
            table: conn.scalar(text("SELECT reloptions FROM pg_class WHERE oid = CAST(:t AS regclass)"), {"t": table})
            for table in ("agents", "agent_terms", "agent_search", "relay_messages")
        }
    # The README's "PostgreSQL tuning" gives the settings for bulk imports; the relay's queue keeps its own.
    assert options["agents"] is options["agent_terms"] is options["agent_search"] is None
    assert "fillfactor=80" in options["relay_messages"]


def test_sqlite_keeps_the_terms_clustered_without_rowids_and_an_upgrade_at_the_baseline_keeps_every_term(
    services, client, auth
):  # type: ignore[no-untyped-def]
    for n, tags in enumerate([["clustered", "kept"], ["clustered"]]):
        register(client, auth, f"Terms {n}", tags=tags)
    before = client.get("/v1/agents?tag=clustered&tag=kept&match=any").get_json()["items"]

    upgrade(services.engine)  # what every start of the embedded default does

    assert client.get("/v1/agents?tag=clustered&tag=kept&match=any").get_json()["items"] == before
    assert len(before) == 2
    if services.engine.dialect.name == "sqlite":
        with services.engine.connect() as conn:
            ddl = conn.scalar(text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'agent_terms'"))
        assert ddl.rstrip().endswith("WITHOUT ROWID")
