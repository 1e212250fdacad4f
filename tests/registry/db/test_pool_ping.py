"""PostgreSQL connections idle in the pool are checked before use; busy ones are trusted, and a
disconnect in between costs one failed statement, after which the pool connects afresh."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from registry.db import make_engine


@pytest.fixture
def postgres_url(database_url: str) -> str:
    if not database_url.startswith("postgresql"):
        pytest.skip("pooled connections to a database server are PostgreSQL's")
    return database_url


def _kill_pooled_connection(engine: Engine, url: str) -> int:
    """Leave one connection in the pool whose server process has been terminated."""
    with engine.connect() as conn:
        pid = conn.scalar(text("SELECT pg_backend_pid()"))
    killer = make_engine(url)
    with killer.connect() as conn:
        assert conn.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    killer.dispose()
    return int(pid)


def test_a_connection_idle_past_the_threshold_is_replaced_before_use(postgres_url: str) -> None:
    engine = make_engine(postgres_url, ping_after_idle=0.0)
    try:
        dead = _kill_pooled_connection(engine, postgres_url)
        with engine.connect() as conn:  # the ping at checkout finds it dead; a new one is made
            assert conn.scalar(text("SELECT pg_backend_pid()")) != dead
    finally:
        engine.dispose()


def test_a_connection_used_moments_ago_is_trusted_and_a_disconnect_refreshes_the_pool(postgres_url: str) -> None:
    engine = make_engine(postgres_url, ping_after_idle=3600.0)
    try:
        dead = _kill_pooled_connection(engine, postgres_url)
        with pytest.raises(OperationalError) as failed, engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        assert failed.value.connection_invalidated
        with engine.connect() as conn:
            assert conn.scalar(text("SELECT pg_backend_pid()")) != dead
    finally:
        engine.dispose()
