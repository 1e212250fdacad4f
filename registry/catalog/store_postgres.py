"""The catalog on PostgreSQL: a GIN-indexed tsvector for text, row locks for writers."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, TextClause, column, delete, select, table, text
from sqlalchemy.sql.expression import TableClause

from registry.catalog.models import Agent
from registry.catalog.search_index import FIELD_LIST, CachedCount, Fields, SearchIndex
from registry.catalog.store import CatalogStore, TableRows
from registry.retrieval.embedding import Embedder
from registry.retrieval.scoring import FIELDS

SEARCH_ROWS = table("agent_search", column("agent_pk"), *(column(f) for f in FIELDS), column("document_tsv"))
TERM_COUNT_CAP = 20_000  # past this many agents, a term's exact count does not change its rank

_COMMON_TERMS = text(
    "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
    "WHERE tablename = 'agent_search' AND attname = 'document_tsv'"
)
_TERM_COUNTS = text(
    "SELECT u.term, c.n FROM unnest(CAST(:terms AS text[])) AS u(term) CROSS JOIN LATERAL "
    "(SELECT count(*) AS n FROM (SELECT 1 FROM agent_search "
    "WHERE document_tsv @@ CAST(quote_literal(u.term) AS tsquery) LIMIT :cap) AS matches) AS c"
)
# The oldest transaction still running, with the vectors written since a marker, in one round
# trip (a row of nulls when there are none).
_EMBEDDINGS_SINCE = text(
    "SELECT s.oldest_running, e.agent_pk, e.vector "
    "FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS oldest_running) AS s "
    "LEFT JOIN agent_embeddings AS e ON e.model = :model AND e.marker >= :marker"
)


def tsvector(fields: Fields) -> str:
    """The analysed fields' distinct terms as tsvector text, without positions (candidates are
    found by term; the fields themselves are scored)."""
    terms = dict.fromkeys(term for field in fields for term in field.split())
    # Terms are letters and digits only (`registry.retrieval.analysis`): nothing to escape.
    return " ".join(f"'{term}'" for term in terms)


class PostgresSearchIndex(SearchIndex):
    def __init__(self, embedder: Embedder) -> None:
        super().__init__(embedder)
        # The planner's own statistics name the most common terms and their shares: no count of
        # a term held by half the catalog. They change with ANALYZE; kept ten minutes.
        self._common = CachedCount(ttl=600.0)

    def text_table(self) -> TableClause:
        return SEARCH_ROWS

    def text_row(self, pk: int, fields: Fields) -> dict[str, Any]:
        return {"agent_pk": pk, **dict(zip(FIELDS, fields)), "document_tsv": tsvector(fields)}

    def remove_text(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(SEARCH_ROWS).where(SEARCH_ROWS.c.agent_pk == agent_pk))

    def count_documents(self, conn: Connection) -> int:
        estimate = conn.scalar(text("SELECT reltuples FROM pg_class WHERE relname = 'agent_search'"))
        if estimate is None or estimate < 0:  # never analyzed
            return int(conn.scalar(text("SELECT count(*) FROM agent_search")) or 0)
        return int(estimate)

    def term_counts(self, conn: Connection, terms: Sequence[str]) -> dict[str, int]:
        shares = self._common.get(lambda: self._common_shares(conn))
        documents = self.document_count(conn)
        counts = {term: max(1, round(shares[term] * documents)) for term in terms if term in shares}
        rare = [term for term in terms if term not in shares]
        if rare:
            with self.forced_index(conn):
                counts.update(
                    (row.term, int(row.n)) for row in conn.execute(_TERM_COUNTS, {"terms": rare, "cap": TERM_COUNT_CAP})
                )
        return counts

    @staticmethod
    def _common_shares(conn: Connection) -> dict[str, float]:
        row = conn.execute(_COMMON_TERMS).first()
        if row is None or row[0] is None:
            return {}
        return dict(zip(row[0], row[1]))

    def match(self, term: str) -> str:
        return f"'{term}'"

    def arm_sql(self, param: str) -> str:
        return f"SELECT agent_pk, {FIELD_LIST} FROM agent_search WHERE document_tsv @@ CAST(%({param})s AS tsquery)"

    def documents_sql(self, pks: Sequence[int]) -> tuple[str, dict[str, Any]]:
        sql = f"SELECT agent_pk, {FIELD_LIST} FROM agent_search WHERE agent_pk = ANY(CAST(%(pks)s AS integer[]))"
        return sql, {"pks": list(pks)}

    @contextlib.contextmanager
    def forced_index(self, conn: Connection) -> Iterator[None]:
        # The planner guesses a term's matches from a sample and, for a term it has not seen, may
        # walk the whole table to fill a LIMIT that the text index answers at once.
        conn.exec_driver_sql("SET enable_seqscan = off")
        try:
            yield
        finally:
            conn.exec_driver_sql("RESET enable_seqscan")

    def embeddings_since(self, conn: Connection, marker: Any) -> tuple[list[tuple[int, bytes]], Any]:
        # A marker is the id of the transaction that wrote the row. Transactions older than the
        # oldest one still running have all ended, so what they wrote is visible now: the next
        # read starts there, and rereads only what was in flight.
        # Markers are transaction ids, never negative: none (the first read) reads every vector.
        rows = conn.execute(_EMBEDDINGS_SINCE, {"model": self.embedder.model_id, "marker": marker or 0}).all()
        vectors = [(pk, bytes(vector)) for _, pk, vector in rows if pk is not None]
        return vectors, rows[0].oldest_running


_WALK = "SET enable_hashjoin = off; SET enable_hashagg = off; SET max_parallel_workers_per_gather = 0"
_PLAN_FREELY = "RESET enable_hashjoin; RESET enable_hashagg; RESET max_parallel_workers_per_gather"
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
    def __init__(self, engine: Engine, reads: Engine, embedder: Embedder) -> None:
        super().__init__(engine, reads, PostgresSearchIndex(embedder))

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

    @contextlib.contextmanager
    def walking_merged_ranges(self, conn: Connection) -> Iterator[None]:
        # The planner knows nothing of how many distinct agents a union of ranges holds and guesses
        # 200: a page of 201 or 1,001 (a ranked search's narrowing, `RankedSearch._narrowed`) then
        # looks like all of them, and it hashes, in parallel, every agent of every range (100,000
        # agents, three popular tags: 100-250 ms) instead of walking the merged ranges and the
        # agents in pk order until the page is full (1-7 ms).
        conn.exec_driver_sql(_WALK)
        try:
            yield
        finally:
            conn.exec_driver_sql(_PLAN_FREELY)

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
