"""The catalog on SQLite: FTS5 for text, and one writer at a time."""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Connection, Engine, column, table, text, update
from sqlalchemy.sql.expression import FromClause

from registry.catalog.models import Agent
from registry.catalog.store import CatalogStore
from registry.db import writer_lock

_FTS = table("agent_fts", column("rowid"), column("document"))
_WORDS = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 8


class SqliteCatalogStore(CatalogStore):
    def __init__(self, engine: Engine, reads: Engine) -> None:
        super().__init__(engine, reads)
        self._writer = writer_lock(engine)

    def writing(self) -> AbstractContextManager[object]:
        # SQLite has one writer: batched writers of every process queue on one lock instead of
        # SQLite's busy handler, which sleeps and retries (`registry.db.WriterLock`).
        return self._writer.hold()

    def lock_agent(self, conn: Connection, agent_pk: int) -> None:
        # No row locks, and the driver opens the transaction only at the first write: a write that
        # changes nothing takes the database's write lock before anything is read.
        conn.execute(update(Agent).where(Agent.pk == agent_pk).values(status=Agent.status))

    def documents(self, rows: list[tuple[int, str]]) -> tuple[FromClause, list[dict[str, Any]]]:
        return _FTS, [{"rowid": pk, "document": document} for pk, document in rows]

    def remove_document(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(text("DELETE FROM agent_fts WHERE rowid = :pk"), {"pk": agent_pk})

    def text_query(self, user_text: str) -> str | None:
        # FTS5 folds the words as it folded the documents (`unicode61 remove_diacritics 2`).
        words = _WORDS.findall(user_text)[:MAX_QUERY_WORDS]
        return " ".join(f'"{word}"*' for word in words) or None
