"""Statements run on the driver's cursor: the relay's per-notification writes (ingest, outcome,
attempt log). Through `Connection.execute` each batch cost a fifth to a third more CPU, which
`bench/relay.py` showed as 19-31 % less ingest and delivery throughput."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, Insert, exc
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler


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

    def execute_many(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """Run the statement once per row (each a dict of its bind parameters) in `conn`'s transaction."""
        self.run(conn, self.prepare(conn.dialect, rows))

    def prepare(self, dialect: Dialect, rows: list[dict[str, Any]]) -> list[Any]:
        """The driver's parameters of each row, bind-processed (e.g. JSON serialised), for `run`.
        Preparing before taking a write lock keeps that work out of the time the lock is held."""
        form = self._form(dialect)
        return [form.parameters(row) for row in rows]

    def run(self, conn: Connection, parameters: list[Any]) -> None:
        """Run the statement once per prepared parameter set in `conn`'s transaction."""
        with self._cursor(conn, parameters) as (cursor, sql):
            cursor.executemany(sql, parameters)

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
        raise exc.DBAPIError.instance(
            sql, parameters, error, dialect.loaded_dbapi.Error, dialect=dialect, connection_invalidated=gone
        ) from error
    finally:
        cursor.close()


class _DriverForm:
    """A statement's SQL for one dialect, and how a row of bind values becomes the driver's parameters."""

    def __init__(self, compiled: SQLCompiler, dialect: Dialect) -> None:
        self.sql: str = compiled.string
        self._order = tuple(compiled.positiontup or ()) if compiled.positional else None
        binds = {name: bind for bind, name in compiled.bind_names.items()}  # as named in the SQL
        processors = {
            name: processor
            for name, bind in binds.items()
            if (processor := bind.type.bind_processor(dialect)) is not None
        }
        constants = {name: bind.value for name, bind in binds.items() if not bind.required}
        self._constants = {
            name: processors[name](value) if name in processors else value for name, value in constants.items()
        }
        self._processors = [(name, processor) for name, processor in processors.items() if name not in constants]

    def parameters(self, row: dict[str, Any]) -> Any:
        values = {**self._constants, **row}
        for name, processor in self._processors:
            values[name] = processor(values[name])
        return values if self._order is None else tuple(values[name] for name in self._order)
