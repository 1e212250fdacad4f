"""The catalog on SQLite: FTS5 for text, and one writer at a time."""

from __future__ import annotations

import functools
import re
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, update
from sqlalchemy.sql.expression import FromClause

from registry.catalog.models import Agent
from registry.catalog.store import MAX_QUERY_WORDS, CatalogStore, TableRows
from registry.catalog.store_search import FTS_TABLE
from registry.db import DriverStatement, writer_lock


@functools.lru_cache(maxsize=64)
def _insert(table: Any, columns: tuple[str, ...]) -> DriverStatement:
    return DriverStatement(insert(table), columns)


_WORDS = re.compile(r"\w+", re.UNICODE)


class SqliteCatalogStore(CatalogStore):
    def __init__(self, engine: Engine, reads: Engine) -> None:
        super().__init__(engine, reads)
        self._writer = writer_lock(engine)

    def writing(self) -> AbstractContextManager[object]:
        # SQLite has one writer: batched writers of every process queue on one lock instead of
        # SQLite's busy handler, which sleeps and retries (`registry.db.WriterLock`).
        return self._writer.hold()

    def new_keys(self, conn: Connection, count: int) -> list[int]:
        # After the largest, as SQLite itself would; the caller holds the one writer.
        last = conn.exec_driver_sql("SELECT max(pk) FROM agents").scalar() or 0
        return list(range(last + 1, last + count + 1))

    def insert_tables(self, conn: Connection, tables: TableRows) -> None:
        # On the driver's cursor (`registry.db.DriverStatement`): a registration writes six tables,
        # and `Connection.execute` for each costs more CPU than SQLite's work on the rows.
        for into, rows in tables.items():
            if rows:
                _insert(into, tuple(rows[0])).execute_many(conn, rows)

    def lock_agent(self, conn: Connection, agent_pk: int) -> None:
        # No row locks, and the driver opens the transaction only at the first write: a write that
        # changes nothing takes the database's write lock before anything is read.
        conn.execute(update(Agent).where(Agent.pk == agent_pk).values(status=Agent.status))

    def documents(self, rows: list[tuple[int, str]]) -> tuple[FromClause, list[dict[str, Any]]]:
        return FTS_TABLE, [{"rowid": pk, "document": document} for pk, document in rows]

    def remove_document(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(FTS_TABLE).where(FTS_TABLE.c.rowid == agent_pk))

    def text_query(self, user_text: str) -> str | None:
        # FTS5 folds the words as it folded the documents (`unicode61 remove_diacritics 2`).
        words = _WORDS.findall(user_text)[:MAX_QUERY_WORDS]
        return " ".join(f'"{word}"*' for word in words) or None
