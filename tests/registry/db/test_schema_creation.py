"""`agentdex serve --no-jobs` and `agentdex worker` started at the same moment on a database that
does not exist yet: both come up, and the schema is created once (the second waits for the first
one's lock, then finds the work done)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url, text

from registry.db import make_engine
from registry.migrate import is_current
from tests.support.agentdex_processes import AgentdexProcess, free_port, user_env

ROUNDS = 6
CREATED = "created the database schema"


def start_together(cwd: Path, env: dict[str, str]) -> tuple[AgentdexProcess, AgentdexProcess, str]:
    port = free_port()
    web = AgentdexProcess("serve", "--no-jobs", "--port", str(port), cwd=cwd, env=env)
    worker = AgentdexProcess("worker", "--niceness", "0", cwd=cwd, env=env)
    return web, worker, f"http://127.0.0.1:{port}"


def assert_both_come_up(web: AgentdexProcess, worker: AgentdexProcess, url: str) -> None:
    with web, worker:
        assert web.wait_until_answering(url), web.output
        assert worker.wait_for_output("Ctrl-C stops it"), worker.output
    outputs = web.output + worker.output
    assert "Traceback" not in outputs and "database is locked" not in outputs, outputs
    assert outputs.count(CREATED) == 1, outputs


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_serve_and_worker_started_together_on_a_new_sqlite_file(tmp_path: Path, round_: int) -> None:
    # No AGENTDEX_SECRET_KEY either: the two also generate the secret beside the database at once.
    web, worker, url = start_together(tmp_path, user_env())
    assert_both_come_up(web, worker, url)
    assert is_current(make_engine(f"sqlite:///{tmp_path / 'agentdex.db'}"))
    assert [p.name for p in tmp_path.glob("agentdex.db.secret*")] == ["agentdex.db.secret"]


@pytest.fixture
def new_postgres_database() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database beside the test database (skipped on SQLite)."""
    base = os.environ.get("AGENTDEX_TEST_DATABASE_URL", "")
    if not base.startswith("postgresql"):
        pytest.skip("PostgreSQL only (AGENTDEX_TEST_DATABASE_URL)")
    url = make_url(base)
    name = f"{url.database}_race_{uuid.uuid4().hex[:8]}"
    server = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield url.set(database=name).render_as_string(hide_password=False)
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    server.engine.dispose()


@pytest.mark.parametrize("round_", range(3))
def test_serve_and_worker_started_together_on_an_empty_postgresql_database(
    tmp_path: Path, new_postgres_database: str, round_: int
) -> None:
    env = user_env(AGENTDEX_DATABASE_URL=new_postgres_database, AGENTDEX_SECRET_KEY="s" * 32)
    web, worker, url = start_together(tmp_path, env)
    assert_both_come_up(web, worker, url)
    engine = make_engine(new_postgres_database)
    assert is_current(engine)
    engine.dispose()
