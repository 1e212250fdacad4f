"""The catalog's search index: each agent's analysed text and its embedding, and the statements
that find a ranked query's candidates in them. SQLite keeps the text in an FTS5 table, PostgreSQL
in a table with a GIN-indexed vector; both keep embeddings in `agent_embeddings`.

The database only finds candidates; `registry.retrieval.scoring` scores them from the fields
returned here, so both databases rank alike.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from sqlalchemy import Connection, Integer, Text, column, delete, table
from sqlalchemy.sql.expression import TableClause

from registry.catalog.models import AgentEmbedding
from registry.catalog.records import embedding_text, search_fields
from registry.db.driver import driver_cursor
from registry.retrieval import embedding
from registry.retrieval.analysis import field_text
from registry.retrieval.scoring import FIELDS
from registry.validation import CardSummary

Fields = tuple[str, ...]  # an agent's analysed text, by `FIELDS`


@dataclasses.dataclass(frozen=True)
class Arm:
    """What one part of a ranked query's candidates is: agents holding `term`, at most `limit` of
    them; `common`: the term is on so many agents that reading the table until `limit` are found
    beats the text index, which lists all of them first."""

    term: str
    limit: int | None = None
    common: bool = False


TableRows = dict[Any, list[dict[str, Any]]]

FTS_TABLE = table("agent_fts", column("rowid", Integer), *(column(f, Text) for f in FIELDS))
_EMBEDDINGS = AgentEmbedding.__table__
TERM_COUNT_TTL = 300.0  # seconds a term's count is kept
MAX_KEPT_TERMS = 100_000
FIELD_LIST = ", ".join(FIELDS)


@dataclasses.dataclass(frozen=True)
class IndexEntry:
    """An agent's entry in the search index, before it has a pk: its analysed fields and its
    packed vector (None with semantic search off)."""

    fields: Fields
    vector: bytes | None = None


class CachedCount:
    """A number that is costly to count and changes slowly, kept for `ttl` seconds."""

    def __init__(self, ttl: float = 60.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ttl, self._monotonic = ttl, monotonic
        self._value: tuple[float, Any] | None = None
        self._lock = threading.Lock()

    def get(self, count: Callable[[], Any]) -> Any:
        with self._lock:
            if self._value is None or self._value[0] <= self._monotonic():
                self._value = (self._monotonic() + self._ttl, count())
            return self._value[1]


class SearchIndex:
    """What each database does its own way is in the subclasses below."""

    def __init__(self, embedder: embedding.Embedder) -> None:
        self.embedder = embedder
        self._documents = CachedCount()
        self._term_counts: dict[str, tuple[float, int]] = {}  # term → (expires, agents holding it)

    def prepare(self, summaries: Sequence[CardSummary]) -> list[IndexEntry]:
        """The index entries of cards: analysed text and packed vector. Made before a write takes
        the database (SQLite's one writer waits for no model)."""
        fields = [tuple(field_text(texts) for texts in search_fields(summary)) for summary in summaries]
        if not self.embedder.dimensions:
            return [IndexEntry(entry) for entry in fields]
        vectors = embedding.pack(self.embedder.embed([embedding_text(summary) for summary in summaries]))
        return [IndexEntry(entry, vector) for entry, vector in zip(fields, vectors)]

    def rows(self, conn: Connection, agents: Sequence[tuple[int, IndexEntry]]) -> TableRows:
        """The index rows of agents (pk, entry) about to be written on `conn`."""
        rows: TableRows = {self.text_table(): [self.text_row(pk, entry.fields) for pk, entry in agents]}
        embedded = [(pk, entry.vector) for pk, entry in agents if entry.vector is not None]
        if embedded:
            markers = self.markers(conn, len(embedded))
            rows[_EMBEDDINGS] = [
                {"agent_pk": pk, "model": self.embedder.model_id, "vector": vector, **marker}
                for (pk, vector), marker in zip(embedded, markers)
            ]
        return rows

    def remove(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(AgentEmbedding).where(AgentEmbedding.agent_pk == agent_pk))
        self.remove_text(conn, agent_pk)

    def held_by(self, conn: Connection, terms: Sequence[str]) -> dict[str, int]:
        """How many agents hold each term, each count (but zero) kept `TERM_COUNT_TTL` seconds: a
        count moves a term's weight only when it changes by a large factor, and counting a term on
        thousands of agents reads them all (PostgreSQL, 1,000,000 agents: ~6 ms a term)."""
        now = time.monotonic()
        kept = {term: entry[1] for term in terms if (entry := self._term_counts.get(term)) and entry[0] > now}
        missing = [term for term in terms if term not in kept]
        if missing:
            counted = self.term_counts(conn, missing)
            if len(self._term_counts) > MAX_KEPT_TERMS:
                self._term_counts.clear()
            # A term no agent holds is not kept: the next agent registered with it must be found.
            self._term_counts.update((term, (now + TERM_COUNT_TTL, n)) for term, n in counted.items() if n)
            kept.update(counted)
        return kept

    def document_count(self, conn: Connection) -> int:
        """About how many agents the text index holds (kept a minute)."""
        return max(1, int(self._documents.get(lambda: self.count_documents(conn))))

    def candidates(self, conn: Connection, arms: Sequence[Arm]) -> dict[int, Fields]:
        """The agents the arms find, with their fields: a statement for the common terms' arms and
        one, on the text index, for the others."""
        found: dict[int, Fields] = {}
        common = [arm for arm in arms if arm.common]
        if common:
            found.update(self._union(conn, common))
        rare = [arm for arm in arms if not arm.common]
        if rare:
            with self.forced_index(conn):
                found.update(self._union(conn, rare))
        return found

    def _union(self, conn: Connection, arms: Sequence[Arm]) -> dict[int, Fields]:
        selects, params = [], {}
        for index, arm in enumerate(arms):
            params[f"t{index}"] = self.match(arm.term)
            bound = f" LIMIT {int(arm.limit)}" if arm.limit is not None else ""
            selects.append(f"SELECT * FROM ({self.arm_sql(f't{index}')}{bound}) AS arm{index}")
        sql = " UNION ALL ".join(selects)
        # On the driver's cursor: SQLAlchemy's result rows cost as much again as the database's
        # work on a query's ~400 candidates.
        with driver_cursor(conn, sql, params) as cursor:
            cursor.execute(sql, params)
            return {row[0]: row[1:] for row in cursor.fetchall()}

    def documents(self, conn: Connection, pks: Sequence[int]) -> dict[int, Fields]:
        """The fields of the given agents."""
        # Up to a narrow filter's 1,000 agents, as one parameter on the driver's cursor: a bound
        # value each, and SQLAlchemy's rows, cost more than the database's work.
        sql, params = self.documents_sql(pks)
        with driver_cursor(conn, sql, params) as cursor:
            cursor.execute(sql, params)
            return {row[0]: tuple(row[1:]) for row in cursor.fetchall()}

    def embeddings_since(self, conn: Connection, marker: Any) -> tuple[list[tuple[int, bytes]], Any]:
        """Vectors of the current model written since `marker` (None: all), and the next marker."""
        raise NotImplementedError

    # -- what each database does its own way ----------------------------------------------

    def text_table(self) -> TableClause:
        raise NotImplementedError

    def text_row(self, pk: int, fields: Fields) -> dict[str, Any]:
        raise NotImplementedError

    def markers(self, conn: Connection, count: int) -> list[dict[str, int]]:
        """The `marker` values of `count` new embedding rows (nothing where the server assigns them)."""
        return [{}] * count

    def remove_text(self, conn: Connection, agent_pk: int) -> None:
        raise NotImplementedError

    def count_documents(self, conn: Connection) -> int:
        raise NotImplementedError

    def term_counts(self, conn: Connection, terms: Sequence[str]) -> dict[str, int]:
        """How many agents hold each term."""
        raise NotImplementedError

    def match(self, term: str) -> str:
        raise NotImplementedError

    def arm_sql(self, param: str) -> str:
        """The statement of one arm, its term the driver's parameter `param` (`match`'s form)."""
        raise NotImplementedError

    def documents_sql(self, pks: Sequence[int]) -> tuple[str, dict[str, Any]]:
        """The statement reading the fields of the agents `pks` (pk first), and its parameters."""
        raise NotImplementedError

    def forced_index(self, conn: Connection) -> AbstractContextManager[object]:
        """Held while rare terms' candidates are read: the planner uses the text index (PostgreSQL)."""
        return nullcontext()
