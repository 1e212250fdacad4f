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

    Past `Connection.execute`'s per-call cache key, lookup and result object; what matters of it
    stays: the caller's transaction (its `commit` events fire), the column types' bind processing
    (UTC datetimes become SQLite text, JSON is serialised), and driver errors raised as
    SQLAlchemy's (a duplicate is an `IntegrityError`). It reads nothing back and does not fire
    `before_cursor_execute`.
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
        form = self._forms.get(conn.dialect.name)
        if form is None:
            compiled = self._statement.compile(dialect=conn.dialect, column_keys=self._columns)
            form = self._forms[conn.dialect.name] = _DriverForm(compiled, conn.dialect)
        parameters = [form.parameters(row) for row in rows]
        with driver_cursor(conn, form.sql, parameters) as cursor:
            cursor.executemany(form.sql, parameters)


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
        # fails to roll back on it (tests/registry/db/test_pool_ping.py); the error says so.
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
