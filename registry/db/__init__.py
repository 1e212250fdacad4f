"""Engines and sessions: SQLite in WAL mode, PostgreSQL through psycopg 3.

SQLite has one writer at a time: `registry.db.sqlite` queues a process's batched writers on an OS
file lock instead of SQLite's sleeping busy handler, and moves WAL checkpoints off the committing
request.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import StaticPool

from registry import jsontext
from registry.db.driver import DriverStatement
from registry.db.pool_ping import PING_AFTER_IDLE, PingWhenIdle
from registry.db.sqlite import BACKSTOP_CHECKPOINT_PAGES, WalCheckpointer, WriterLock, sqlite_path, writer_lock

__all__ = [
    "Base",
    "DriverStatement",
    "WalCheckpointer",
    "WriterLock",
    "make_engine",
    "make_session_factory",
    "queue_claims",
    "single_statements",
    "sqlite_path",
    "writer_lock",
]

# Each PostgreSQL pool hands out its most recently used connection (LIFO): its backend has already
# mapped the shared buffers it touches and grown its memory.
POOL_OPTIONS = {"pool_size": 10, "max_overflow": 20, "pool_use_lifo": True}
JSON_OPTIONS = {"json_serializer": jsontext.dumps_text, "json_deserializer": jsontext.loads}

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def make_engine(
    database_url: str, *, background_checkpoints: bool = False, ping_after_idle: float = PING_AFTER_IDLE
) -> Engine:
    """The engine for a database URL. `background_checkpoints`: a `WalCheckpointer` runs for this
    SQLite file, so commits leave checkpointing to it. `ping_after_idle`: PostgreSQL connections
    idle longer than this are checked before use (`registry.db.pool_ping`)."""
    if database_url.startswith("sqlite"):
        memory = ":memory:" in database_url or database_url in ("sqlite://", "sqlite:///")
        connect = {"check_same_thread": False} if memory else {"check_same_thread": False, "timeout": 30}
        engine = create_engine(
            database_url, **JSON_OPTIONS, connect_args=connect, **({"poolclass": StaticPool} if memory else {})
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        if background_checkpoints:
            event.listen(engine, "connect", _backstop_checkpoints)
        return engine
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url[len("postgresql://") :]
    engine = create_engine(database_url, **JSON_OPTIONS, **POOL_OPTIONS)
    PingWhenIdle(ping_after_idle).attach(engine)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run while one writer commits; NORMAL sync is durable across application
    # crashes (the WAL is fsynced at checkpoints).
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=30000"):
        dbapi_connection.execute(f"PRAGMA {pragma}")


def _backstop_checkpoints(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_CHECKPOINT_PAGES}")


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def single_statements(engine: Engine) -> Engine:
    """`engine` for work that is one statement: on PostgreSQL in autocommit, sparing each statement
    the BEGIN and COMMIT round trips (SQLite's driver opens no transaction for a read anyway)."""
    return engine if engine.dialect.name == "sqlite" else engine.execution_options(isolation_level="AUTOCOMMIT")


def queue_claims(engine: Engine) -> Engine:
    """PostgreSQL: a small autocommit pool of its own for the claims on a hot queue, whose planner
    never uses bitmap scans; SQLite: `engine`. The caller disposes of it.

    Every message the relay ends leaves a dead entry in the due-time index until VACUUM: an index
    scan marks each dead entry once and later claims step over it, a bitmap scan reads them all
    from the heap again on every claim.
    """
    if engine.dialect.name != "postgresql":
        return engine
    pool = create_engine(
        engine.url,
        **JSON_OPTIONS,
        **{**POOL_OPTIONS, "pool_size": 2, "max_overflow": 8},
        isolation_level="AUTOCOMMIT",
        connect_args={"options": "-c enable_bitmapscan=off"},
    )
    PingWhenIdle(PING_AFTER_IDLE).attach(pool)
    return pool
