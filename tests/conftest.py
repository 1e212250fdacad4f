"""Shared fixtures: a real database (SQLite by default, PostgreSQL when AGENTDEX_TEST_DATABASE_URL
points at one), the app wired to it, tokens, and real HTTP servers on loopback."""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from werkzeug.serving import make_server

from registry.container import Services, build_services
from registry.db import Base, make_engine
from registry.migrate import upgrade
from registry.settings import Settings
from tests.support.cards import make_card
from tests.support.servers import CardServer

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("AGENTDEX_TEST_DATABASE_URL") or f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    upgrade(engine)
    engine.dispose()
    yield url


def _clear(services: Services) -> None:
    tables = [t.name for t in reversed(Base.metadata.sorted_tables)]
    with services.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
        else:
            conn.execute(text("DELETE FROM agent_fts"))
            for table in tables:
                conn.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        secret_key="test-secret-key-0123456789",
        allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
        allow_http=True,
        fetch_timeout=2.0,
    )


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    services = build_services(settings)
    _clear(services)
    yield services
    services.close()


@pytest.fixture
def app(services: Services):  # type: ignore[no-untyped-def]
    from registry.app import create_app

    return create_app(services=services)


@pytest.fixture
def client(app):  # type: ignore[no-untyped-def]
    return app.test_client()


@pytest.fixture
def writer_token(services: Services) -> str:
    return services.tokens.create("alice", ["agents:write"]).token


@pytest.fixture
def other_token(services: Services) -> str:
    return services.tokens.create("bob", ["agents:write"]).token


@pytest.fixture
def admin_token(services: Services) -> str:
    return services.tokens.create("root", ["admin"]).token


@pytest.fixture
def auth(writer_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {writer_token}"}


@pytest.fixture
def card_server() -> Iterator[CardServer]:
    server = CardServer()
    yield server
    server.close()


@pytest.fixture
def registry_url(app) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The registry app served over real HTTP on loopback (for CLI tests)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def card():  # type: ignore[no-untyped-def]
    return make_card("Weather Agent", tags=["weather", "forecast"])
