"""The catalog on PostgreSQL: a GIN-indexed tsvector for text, row locks for writers."""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import orjson
from sqlalchemy import Connection, TextClause, delete, select, text
from sqlalchemy.sql.expression import FromClause

from registry.catalog.models import Agent
from registry.catalog.store import MAX_QUERY_WORDS, CatalogStore, TableRows
from registry.catalog.store_search import SEARCH_TABLE

_LEXEMES = re.compile(r"[^\W_]+")
# ASCII text, the common case, is split without a regular expression: letters and digits kept
# (in lower case), everything else a separator.
_ASCII_WORDS = str.maketrans({c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
MAX_LEXEME = 200  # characters; PostgreSQL refuses a lexeme over 2,047 bytes


def lexemes(source: str) -> list[str]:
    """The words of `source` as the index keeps them, in order: runs of letters and digits, in
    lower case and without diacritics, as SQLite's FTS5 table tokenises them, so that both
    databases find the same agents."""
    if source.isascii():
        words = source.translate(_ASCII_WORDS).split()
    else:
        folded = "".join(c for c in unicodedata.normalize("NFKD", source.lower()) if not unicodedata.combining(c))
        words = _LEXEMES.findall(folded)
    return [word[:MAX_LEXEME] for word in words]


def vector(document: str) -> str:
    """A document as tsvector text: its lexemes without positions (matching needs none). Built
    here rather than by `to_tsvector`, so both databases split words alike."""
    words = sorted(set(lexemes(document)))
    return "'" + "' '".join(words) + "'" if words else ""


_NEW_KEYS = text("SELECT nextval(pg_get_serial_sequence('agents', 'pk')) FROM generate_series(1, :n)")


@functools.lru_cache(maxsize=256)
def _insert_from_json(shape: tuple[tuple[str, tuple[str, ...]], ...]) -> TextClause:
    """One statement inserting into each (table, columns) of `shape` the rows of parameter
    :r<n>, a JSON array of objects (data-modifying CTEs run once each, whatever the query reads)."""
    inserts = []
    for n, (name, columns) in enumerate(shape):
        names = ", ".join(columns)
        inserts.append(
            f"i{n} AS (INSERT INTO {name} ({names}) SELECT {names} "
            f"FROM json_populate_recordset(NULL::{name}, CAST(:r{n} AS json)))"
        )
    return text(f"WITH {', '.join(inserts)} SELECT 1")


def _hex(value: Any) -> str:
    """bytea's text form, for raw cards."""
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class PostgresCatalogStore(CatalogStore):
    @contextlib.contextmanager
    def planned_for_values(self, conn: Connection) -> Iterator[None]:
        # psycopg prepares a statement that has run five times, and PostgreSQL then settles on one
        # generic plan for all values; a search must be planned for its values (a tag of 192 agents
        # and one of 20,000 want opposite joins). Other statements stay prepared.
        driver = conn.connection.dbapi_connection
        threshold = driver.prepare_threshold  # type: ignore[union-attr]
        driver.prepare_threshold = None  # type: ignore[union-attr]
        try:
            yield
        finally:
            driver.prepare_threshold = threshold  # type: ignore[union-attr]

    def lock_agent(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(select(Agent.pk).where(Agent.pk == agent_pk).with_for_update())

    def new_agents_connection(self) -> AbstractContextManager[Connection]:
        # New agents and all their rows go as one statement (`insert_tables`): whole by itself,
        # with no transaction around it, one round trip.
        return self._reads.connect()

    def new_keys(self, conn: Connection, count: int) -> list[int]:
        return sorted(conn.scalars(_NEW_KEYS, {"n": count}))

    def insert_tables(self, conn: Connection, tables: TableRows) -> None:
        # Each table's rows go to the server as one JSON document that it turns into rows itself
        # (`json_populate_recordset`), every table in one statement: the driver otherwise sends,
        # and the server executes, a statement per row (a registration writes ~25 rows).
        tables = {table: rows for table, rows in tables.items() if rows}
        if not tables:
            return
        shape = tuple((table.name, tuple(rows[0])) for table, rows in tables.items())
        params = {f"r{n}": orjson.dumps(rows, default=_hex).decode() for n, rows in enumerate(tables.values())}
        conn.execute(_insert_from_json(shape), params)

    def documents(self, rows: list[tuple[int, str]]) -> tuple[FromClause, list[dict[str, Any]]]:
        return SEARCH_TABLE, [{"agent_pk": pk, "document_tsv": vector(document)} for pk, document in rows]

    def remove_document(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(SEARCH_TABLE).where(SEARCH_TABLE.c.agent_pk == agent_pk))

    def text_query(self, user_text: str) -> str | None:
        words = list(dict.fromkeys(lexemes(user_text)))[:MAX_QUERY_WORDS]
        return " & ".join(f"'{word}':*" for word in words) or None
