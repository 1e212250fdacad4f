"""Engine and session factory. SQLite runs in WAL mode; PostgreSQL through psycopg 3.

SQLite has one writer at a time. Two things keep concurrent writers from paying more than that:
`writer_lock` queues a process's batched writers on an OS file lock (woken as soon as it is free)
instead of SQLite's busy handler (which sleeps 1, 2, 5, 10… ms and retries), and
`WalCheckpointer` moves WAL checkpoints (page copies and fsyncs) off the committing request.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Insert, MetaData, create_engine, event, exc
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.compiler import SQLCompiler

from registry import jsontext
from registry.db.pool_ping import PING_AFTER_IDLE, PingWhenIdle

log = logging.getLogger(__name__)

# With a background checkpointer the committing connection only checkpoints as a backstop, when
# the WAL has grown past this many pages (~40 MB) because the checkpointer fell behind.
BACKSTOP_CHECKPOINT_PAGES = 10_000

# A PostgreSQL pool per engine: connections kept, and extra ones a burst may open on top. Each
# pool hands out its most recently used connection (LIFO): its backend has already mapped the
# shared buffers it touches and grown its memory. First-in-first-out spread an import's ten
# batches over nine backends, each paying page faults anew (see catalog_index.STATEMENT_AGENTS).
POOL_SIZE, POOL_OVERFLOW = 10, 20
POOL_OPTIONS = {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW, "pool_use_lifo": True}

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def make_engine(database_url: str, *, background_checkpoints: bool = False,
                ping_after_idle: float = PING_AFTER_IDLE) -> Engine:
    """Create the engine for a database URL, with the pragmas SQLite needs for a web server.

    `background_checkpoints`: the caller runs a `WalCheckpointer` for this (file) database, so
    commits leave checkpointing to it. `ping_after_idle`: PostgreSQL connections idle in the pool
    longer than this many seconds are checked before use (`registry.db.pool_ping`).
    """
    # JSON columns (interfaces, modes, issues, signature details…) through orjson.
    options: dict[str, Any] = {"future": True, "json_serializer": jsontext.dumps_text, "json_deserializer": jsontext.loads}
    if database_url.startswith("sqlite"):
        if ":memory:" in database_url or database_url in ("sqlite://", "sqlite:///"):
            options.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            options["connect_args"] = {"check_same_thread": False, "timeout": 30}
        engine = create_engine(database_url, **options)
        event.listen(engine, "connect", _sqlite_pragmas)
        if background_checkpoints:
            event.listen(engine, "connect", _backstop_checkpoints)
        return engine
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url[len("postgresql://") :]
    options.update(POOL_OPTIONS)
    # psycopg prepares a statement that has run five times, and PostgreSQL then settles on one
    # generic plan for all values: a search must be planned for its values (a tag of 192 agents
    # and one of 20,000 want opposite joins), so nothing is prepared.
    options["connect_args"] = {"prepare_threshold": None}
    engine = create_engine(database_url, **options)
    PingWhenIdle(ping_after_idle).attach(engine)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run while one writer commits; NORMAL sync is durable across
    # application crashes (the WAL is fsynced at checkpoints), which is what WAL is for.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _backstop_checkpoints(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_CHECKPOINT_PAGES}")


def sqlite_path(engine: Engine) -> Path | None:
    """The database file of a file-backed SQLite engine, else None."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return None
    return Path(engine.url.database)


class WriterLock:
    """Serialises one database's batched writers across threads and processes (SQLite only).

    A thread lock for this process, then `flock` on `<database>-writer.lock` for the others.
    PostgreSQL takes row locks itself, so there the lock does nothing.
    """

    def __init__(self, path: Path | None) -> None:
        self._path = None if path is None else path.with_name(path.name + "-writer.lock")
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._pid = os.getpid()
        self._held = threading.local()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock; a thread that holds it already goes on (a batch writer's own writes)."""
        if self._path is None or getattr(self._held, "flag", False):
            yield
            return
        if self._pid != os.getpid():  # forked (e.g. a preloading server): the file and the thread
            self._fd, self._thread_lock, self._pid = None, threading.Lock(), os.getpid()  # lock are the parent's
        with self._thread_lock:
            fd = self._file()
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._held.flag = True
            try:
                yield
            finally:
                self._held.flag = False
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _file(self) -> int:
        if self._fd is None:
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd


_writer_locks: weakref.WeakKeyDictionary[Engine, WriterLock] = weakref.WeakKeyDictionary()
_writer_locks_guard = threading.Lock()


def writer_lock(engine: Engine) -> WriterLock:
    """The one WriterLock of this engine in this process (shared by its group committers)."""
    with _writer_locks_guard:
        lock = _writer_locks.get(engine)
        if lock is None:
            lock = _writer_locks[engine] = WriterLock(sqlite_path(engine))
        return lock


class WalCheckpointer:
    """Checkpoints a SQLite WAL from a background thread every `interval` seconds.

    PASSIVE checkpoints never block readers or writers; the committing requests no longer copy
    pages and fsync when the WAL crosses SQLite's 1,000-page default.
    """

    def __init__(self, path: Path, interval: float = 0.5) -> None:
        self._path = path
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpointer", daemon=True)

    def start(self) -> WalCheckpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def checkpoint(self, connection: sqlite3.Connection) -> None:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _run(self) -> None:
        connection = sqlite3.connect(self._path, timeout=1, check_same_thread=False)
        try:
            while not self._stop.wait(self._interval):
                try:
                    self.checkpoint(connection)
                except sqlite3.Error as error:  # busy or locked: the next round tries again
                    log.debug("WAL checkpoint skipped: %s", error)
        finally:
            connection.close()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def queue_claims(engine: Engine) -> Engine:
    """PostgreSQL: an engine of its own (a small pool of autocommit connections) for the claims on a
    hot queue (`LeaseColumns.claim_statement`), whose planner never uses bitmap scans. SQLite: `engine`.

    Each message the relay ends leaves a dead entry in the due-time index until VACUUM, and
    autovacuum looks at a database at most once a minute by default. A plain index scan marks each
    dead entry it meets, and later claims step over it; a bitmap scan reads every one from the heap
    again on every claim. The planner picks either by the statistics of the moment: under
    bench/relay.py on PostgreSQL, of 472 claims slower than 0.3 ms 258 ran the bitmap plan (median
    0.97 ms, 270 buffers) and 214 the index scan (0.49 ms, 129 buffers). Its pool is its own: the
    caller disposes of it.
    """
    if engine.dialect.name != "postgresql":
        return engine
    return _autocommit_pool(engine, "-c enable_bitmapscan=off", pool_size=2, max_overflow=8)


def _autocommit_pool(engine: Engine, options: str | None, *, pool_size: int = POOL_SIZE, max_overflow: int = POOL_OVERFLOW,
                     **connect: Any) -> Engine:
    """A PostgreSQL engine with a pool of its own (`POOL_OPTIONS`, sized as given), for the same
    database as `engine`: autocommit connections started with these server `options`, checked
    before use after idling."""
    if options is not None:
        connect["options"] = options
    sizes = {"pool_size": pool_size, "max_overflow": max_overflow}
    pool = create_engine(engine.url, **{**POOL_OPTIONS, **sizes}, isolation_level="AUTOCOMMIT",
                         json_serializer=jsontext.dumps_text, json_deserializer=jsontext.loads, connect_args=connect)
    PingWhenIdle(PING_AFTER_IDLE).attach(pool)
    return pool


def single_statements(engine: Engine) -> Engine:
    """`engine` for work that is one statement (a read, or a write that is whole in one statement):
    on PostgreSQL its connections run in autocommit, sparing each statement the BEGIN and COMMIT
    or ROLLBACK round trips (at READ COMMITTED every statement has its own snapshot either way; a
    GET of one agent went from three round trips to one). SQLite's driver opens no transaction for
    a read anyway (callers that write on SQLite open theirs). Shares the pool."""
    return engine if engine.dialect.name == "sqlite" else engine.execution_options(isolation_level="AUTOCOMMIT")


class DriverStatement:
    """A statement run for a batch of rows on the driver's cursor, compiled once per dialect.

    For the writes that run once per notification or delivery, SQLAlchemy's `execute` costs more
    CPU than the driver: per call it builds a cache key, looks the statement up, runs each row's
    parameters through the compiled form and builds a result. Measured on PostgreSQL (psycopg,
    batch of four 1 KB relay inserts): 0.78–0.93 ms of CPU a batch through `Connection.execute`,
    0.53–0.58 ms on the cursor of the same connection. What `Connection.execute` does that matters
    stays: the caller's transaction (and its events: `commit` still fires), the column types' bind
    processing (UTC datetimes become SQLite text, JSON is serialised), and errors raised as
    SQLAlchemy's (a duplicate is an `IntegrityError`). Statements run this way do not fire
    `before_cursor_execute`, and read nothing back. (Registration's many plain-valued term rows
    take `DriverInsert` instead: one `unnest` INSERT a batch on PostgreSQL, where executing once
    per row cost the server more.)
    """

    def __init__(self, statement: Any, columns: Sequence[str] | None = None) -> None:
        """`columns`: for an INSERT given no values, the columns each row gives (as `execute` would
        learn from the first row's keys); columns a row leaves out get no default here."""
        # It reads nothing back, so an INSERT must not ask PostgreSQL for the new ids (RETURNING).
        self._statement = statement.inline() if isinstance(statement, Insert) else statement
        self._columns = list(columns) if columns is not None else None
        self._forms: dict[str, _DriverForm] = {}

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns each row gives (the constructor's `columns`)."""
        assert self._columns is not None, "built without a column list"
        return tuple(self._columns)

    def execute_many(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """Run the statement once per row (each a dict of its bind parameters) in `conn`'s transaction."""
        self.run(conn, self.prepare(conn.dialect, rows))

    def prepare(self, dialect: Dialect, rows: list[dict[str, Any]]) -> list[Any]:
        """The driver's parameters of each row, bind-processed (e.g. JSON serialised), for `run`.
        Preparing before taking a write lock keeps that work out of the time the lock is held."""
        form = self._form(dialect)
        return [form.parameters(row) for row in rows]

    def with_value(self, dialect: Dialect, name: str) -> Callable[[Any, Any], Any]:
        """fill(parameters, value): prepared parameters with the plain value of `name` set, for
        a value known only inside the transaction (a new row's key)."""
        return self._form(dialect).setter(name)

    def run(self, conn: Connection, parameters: list[Any]) -> None:
        """Run the statement once per prepared parameter set in `conn`'s transaction."""
        with self._cursor(conn, parameters) as (cursor, sql):
            cursor.executemany(sql, parameters)

    def insert_keys(self, conn: Connection, parameters: list[Any]) -> list[int]:
        """Run an INSERT once per prepared parameter set; the new rows' integer primary keys, in
        order (SQLite's `lastrowid`; PostgreSQL's `RETURNING`, one result per row)."""
        if conn.dialect.name == "sqlite":
            keys = []
            with self._cursor(conn, parameters) as (cursor, sql):
                for row in parameters:
                    cursor.execute(sql, row)
                    keys.append(cursor.lastrowid)
            return keys
        (key,) = self._statement.table.primary_key.columns
        with self._cursor(conn, parameters, f" RETURNING {key.name}") as (cursor, sql):
            cursor.executemany(sql, parameters, returning=True)
            keys = [cursor.fetchone()[0]]
            while cursor.nextset():
                keys.append(cursor.fetchone()[0])
        return keys

    def _form(self, dialect: Dialect) -> _DriverForm:
        form = self._forms.get(dialect.name)
        if form is None:
            compiled = self._statement.compile(dialect=dialect, column_keys=self._columns)
            form = self._forms[dialect.name] = _DriverForm(compiled, dialect)
        return form

    @contextlib.contextmanager
    def _cursor(self, conn: Connection, parameters: list[Any], suffix: str = "") -> Iterator[tuple[Any, str]]:
        """A driver cursor of `conn` and the statement's SQL (`driver_cursor`)."""
        sql = self._form(conn.dialect).sql + suffix
        with driver_cursor(conn, sql, parameters) as cursor:
            yield cursor, sql


@contextlib.contextmanager
def driver_cursor(conn: Connection, sql: str, parameters: Any) -> Iterator[Any]:
    """A driver cursor of `conn`, in its transaction, to run `sql` with `parameters` past
    SQLAlchemy's execution layer (its events and result objects); driver errors are raised as
    SQLAlchemy's, as `Connection.execute` raises them."""
    dialect = conn.dialect
    cursor = conn.connection.cursor()
    try:
        yield cursor
    except dialect.loaded_dbapi.Error as error:
        # A connection the database dropped leaves the pool when the caller's transaction
        # fails to roll back on it (tests/registry/test_pool_ping.py); the error says so.
        gone = dialect.is_disconnect(error, conn.connection.dbapi_connection, cursor)
        raise exc.DBAPIError.instance(sql, parameters, error, dialect.loaded_dbapi.Error,
                                      dialect=dialect, connection_invalidated=gone) from error
    finally:
        cursor.close()


class _DriverForm:
    """A statement's SQL for one dialect, and how a row of bind values becomes the driver's parameters."""

    def __init__(self, compiled: SQLCompiler, dialect: Dialect) -> None:
        self.sql: str = compiled.string
        self._order = tuple(compiled.positiontup or ()) if compiled.positional else None
        binds = {name: bind for bind, name in compiled.bind_names.items()}  # as named in the SQL
        processors = {name: processor for name, bind in binds.items()
                      if (processor := bind.type.bind_processor(dialect)) is not None}
        constants = {name: bind.value for name, bind in binds.items() if not bind.required}
        self._constants = {name: processors[name](value) if name in processors else value
                           for name, value in constants.items()}
        self._processors = [(name, processor) for name, processor in processors.items() if name not in constants]

    def parameters(self, row: dict[str, Any]) -> Any:
        values = {**self._constants, **row}
        for name, processor in self._processors:
            values[name] = processor(values[name])
        return values if self._order is None else tuple(values[name] for name in self._order)

    def setter(self, name: str) -> Callable[[Any, Any], Any]:
        if self._order is None:
            return lambda parameters, value: {**parameters, name: value}
        index = self._order.index(name)
        return lambda parameters, value: (*parameters[:index], value, *parameters[index + 1:])
