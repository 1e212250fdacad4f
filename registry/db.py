"""Engine and session factory. SQLite runs in WAL mode; PostgreSQL through psycopg 3."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import StaticPool

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def make_engine(database_url: str) -> Engine:
    """Create the engine for a database URL, with the pragmas SQLite needs for a web server."""
    options: dict[str, Any] = {"future": True}
    if database_url.startswith("sqlite"):
        if ":memory:" in database_url or database_url in ("sqlite://", "sqlite:///"):
            options.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            options["connect_args"] = {"check_same_thread": False, "timeout": 30}
        engine = create_engine(database_url, **options)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url[len("postgresql://") :]
    options.update(pool_size=10, max_overflow=20, pool_pre_ping=True)
    return create_engine(database_url, **options)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run while one writer commits; NORMAL sync is durable across
    # application crashes (the WAL is fsynced at checkpoints), which is what WAL is for.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)
