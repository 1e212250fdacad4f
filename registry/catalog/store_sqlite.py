"""The catalog on SQLite: FTS5 for text, and one writer at a time."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, column, delete, func, insert, select, table, update
from sqlalchemy.sql.expression import TableClause

from registry.catalog.models import Agent, AgentEmbedding
from registry.catalog.search_index import FIELD_LIST, FTS_TABLE, Fields, SearchIndex
from registry.catalog.store import CatalogStore, TableRows
from registry.db import DriverStatement, writer_lock
from registry.retrieval.embedding import Embedder
from registry.retrieval.scoring import FIELDS


@functools.lru_cache(maxsize=64)
def _insert(table: Any, columns: tuple[str, ...]) -> DriverStatement:
    return DriverStatement(insert(table), columns)


_EMBEDDINGS = AgentEmbedding.__table__
_TERMS = table("agent_fts_terms", column("term"), column("doc"))
_EMBEDDINGS_SINCE = "SELECT agent_pk, vector, marker FROM agent_embeddings WHERE marker > ? AND model = ?"


class SqliteSearchIndex(SearchIndex):
    def text_table(self) -> TableClause:
        return FTS_TABLE

    def text_row(self, pk: int, fields: Fields) -> dict[str, Any]:
        return {"rowid": pk, **dict(zip(FIELDS, fields))}

    def markers(self, conn: Connection, count: int) -> list[dict[str, int]]:
        # Writers take turns (the caller holds the one writer), so markers grow in commit order.
        # Past the largest marker left *and* the clock (microseconds): the row holding the largest
        # may just have been deleted (a removal, a new card), and other processes have read it.
        last = max(conn.scalar(select(func.max(_EMBEDDINGS.c.marker))) or 0, time.time_ns() // 1000)
        return [{"marker": last + n} for n in range(1, count + 1)]

    def remove_text(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(FTS_TABLE).where(FTS_TABLE.c.rowid == agent_pk))

    def count_documents(self, conn: Connection) -> int:
        return int(conn.exec_driver_sql("SELECT count(*) FROM agent_fts").scalar() or 0)

    def term_counts(self, conn: Connection, terms: Sequence[str]) -> dict[str, int]:
        counts = dict.fromkeys(terms, 0)
        counts.update(
            (row.term, int(row.doc))
            for row in conn.execute(select(_TERMS.c.term, _TERMS.c.doc).where(_TERMS.c.term.in_(terms)))
        )
        return counts

    def match(self, term: str) -> str:
        # Terms are letters and digits only (`registry.retrieval.analysis`): quoted, a plain string.
        return f'"{term}"'

    def arm_sql(self, param: str) -> str:
        return f"SELECT rowid, {FIELD_LIST} FROM agent_fts WHERE agent_fts MATCH :{param}"

    def documents_sql(self, pks: Sequence[int]) -> tuple[str, dict[str, Any]]:
        sql = f"SELECT rowid, {FIELD_LIST} FROM agent_fts WHERE rowid IN (SELECT value FROM json_each(:pks))"
        return sql, {"pks": orjson.dumps(list(pks)).decode()}

    def embeddings_since(self, conn: Connection, marker: Any) -> tuple[list[tuple[int, bytes]], Any]:
        # Before every search, and mostly finding nothing: as plain SQL, it skips the statement
        # cache's work, which is most of its cost.
        since = int(marker or 0)
        rows = conn.exec_driver_sql(_EMBEDDINGS_SINCE, (since, self.embedder.model_id)).all()
        return [(pk, bytes(vector)) for pk, vector, _ in rows], max([since, *(row.marker for row in rows)])


class SqliteCatalogStore(CatalogStore):
    def __init__(self, engine: Engine, reads: Engine, embedder: Embedder) -> None:
        super().__init__(engine, reads, SqliteSearchIndex(embedder))
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
