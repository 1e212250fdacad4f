"""The catalog's storage seam: every statement the catalog runs goes through a `CatalogStore`.

The service never knows which database it has. What SQLite and PostgreSQL do differently (the
full-text index, row locks, one writer at a time) is in `store_sqlite.py` and `store_postgres.py`;
what they do alike is here. Writes take a transaction each: nothing half-written stays behind.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from sqlalchemy import Connection, Engine, Row, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from registry import change_events
from registry.audit import AuditEntry
from registry.catalog.models import Agent, AgentCard, AgentTerm, TagCountDelta
from registry.catalog.records import ACTIVE, CardRecord, agent_values, card_values, term_rows
from registry.catalog.search_index import Arm, Fields, IndexEntry, SearchIndex
from registry.catalog.store_facets import FacetReads
from registry.catalog.store_reindex import ReindexStore
from registry.catalog.store_search import SearchFilters, SearchStatements, TermStats
from registry.catalog.tag_counts import TagCounts
from registry.trust import trust_rows

TableRows = dict[Any, list[dict[str, Any]]]  # rows to insert, by table (a Table or a `table()` clause)

# What the API shows of an agent: its pk (for cursors), the columns that change without a new
# card, and the profile rendered from its card when it was stored.
LISTED_COLUMNS = (
    "pk",
    "id",
    "card_url",
    "status",
    "status_message",
    "source",
    "card_version",
    "created_at",
    "updated_at",
    "health_state",
    "health_checked_at",
    "health_latency_ms",
    "health_reason",
    "health_uptime24h",
    "signature_state",
    "signature_kids",
    "signature_checked_at",
    "jwks_url",
    "profile",
)


@dataclasses.dataclass
class NewAgent:
    """A new agent on its way in: its record, its full column values and the audit entry that
    records its arrival (None inside an import, which writes one entry for the batch)."""

    record: CardRecord
    columns: dict[str, Any]
    audit: dict[str, Any] | None = None
    pk: int | None = None  # once written


class CatalogStore(FacetReads, ReindexStore):
    """Reads and writes the catalog's tables. Subclasses say how their database indexes text and
    serialises writers; `registry.container.catalog_store` picks the one that fits. What facets read
    and what reindexing writes are in `store_facets.py` and `store_reindex.py`."""

    def __init__(self, engine: Engine, reads: Engine, index: SearchIndex) -> None:
        """`reads`: the engine for single statements (`registry.db.single_statements`)."""
        self.engine = engine
        self.index = index
        self._reads = reads
        self._search = SearchStatements(engine.dialect.name, LISTED_COLUMNS)
        self._stats = TermStats()
        table = Agent.__table__
        self._one = select(*(table.c[name] for name in LISTED_COLUMNS)).where(table.c.id == bindparam("agent_id"))

    # -- what each database does its own way ----------------------------------------------

    def writing(self) -> AbstractContextManager[object]:
        """Held around a write transaction (SQLite: the one writer; PostgreSQL: nothing)."""
        return nullcontext()

    def planned_for_values(self, conn: Connection) -> AbstractContextManager[object]:
        """Held while a search runs on `conn`: its statements are planned for their values."""
        return nullcontext()

    def walking_merged_ranges(self, conn: Connection) -> AbstractContextManager[object]:
        """Held while a search driven by an any-of group's merged ranges runs on `conn`."""
        return nullcontext()

    def lock_agent(self, conn: Connection, agent_pk: int) -> None:
        """Hold the agent against other writers until the transaction ends."""
        raise NotImplementedError

    # -- new agents ----------------------------------------------------------------------

    def insert_new(self, batch: Sequence[NewAgent]) -> Sequence[int | None]:
        """Insert new agents, all or none; their pks in order. When the batch fails on a unique
        key (a URL registered meanwhile, or twice in the batch), each agent is tried on its own:
        None marks those whose URL is taken."""
        try:
            return self.write_new(batch)
        except IntegrityError:
            if len(batch) == 1:
                return [None]
            return [self.insert_new([new])[0] for new in batch]

    def write_new(self, batch: Sequence[NewAgent]) -> list[int]:
        """Write new agents and every row that comes with them in one transaction; their pks."""
        entries = self.index.prepare([new.record.summary for new in batch])
        with self.writing(), self.new_agents_connection() as conn:
            pks = self.new_keys(conn, len(batch))
            agents = [{**new.columns, "pk": pk} for new, pk in zip(batch, pks)]
            self.insert_tables(conn, {Agent.__table__: agents, **self.rows_of(conn, batch, pks, entries)})
        return pks

    def new_agents_connection(self) -> AbstractContextManager[Connection]:
        """Where new agents are written: a transaction (PostgreSQL: one statement, whole by itself)."""
        return self.engine.begin()

    def new_keys(self, conn: Connection, count: int) -> list[int]:
        """Keys for `count` new agents, ascending. They are drawn before the rows are written, so
        that every table's rows go in one statement (no key read back row by row)."""
        raise NotImplementedError

    def rows_of(
        self, conn: Connection, batch: Sequence[NewAgent], pks: list[int], entries: Sequence[IndexEntry]
    ) -> TableRows:
        """The rows new agents bring besides their own: first card, signature checks, search terms
        and document, tag counts, audit entries."""
        rows: TableRows = {
            AgentCard.__table__: [card_values(new.record, pk, 1) for new, pk in zip(batch, pks)],
            **trust_rows([(new.record.trust, pk, 1) for new, pk in zip(batch, pks)]),
        }
        return {
            **rows,
            **self._index_rows(conn, [(pk, new.record, new.columns) for new, pk in zip(batch, pks)], entries),
            AuditEntry.__table__: [new.audit for new in batch if new.audit],
            change_events.ChangeEvent.__table__: change_events.registered_rows(new.columns for new in batch),
        }

    def _index_rows(
        self,
        conn: Connection,
        agents: list[tuple[int, CardRecord, dict[str, Any]]],
        entries: Sequence[IndexEntry] | None = None,
    ) -> TableRows:
        """The search terms, text and embedding of agents (their `entries`, else prepared now), and
        the tag counts of the active ones."""
        if entries is None:
            entries = self.index.prepare([record.summary for _, record, _ in agents])
        terms = [row for pk, record, values in agents for row in term_rows(pk, values, record.summary)]
        active = {pk for pk, _, values in agents if values["status"] == ACTIVE}
        return {
            AgentTerm.__table__: [{"agent_pk": pk, "kind": kind, "value": value} for pk, kind, value in terms],
            **self.index.rows(conn, [(pk, entry) for (pk, _, _), entry in zip(agents, entries)]),
            TagCountDelta.__table__: TagCounts.delta_rows(
                added=[value for pk, kind, value in terms if kind == "tag" and pk in active]
            ),
        }

    def insert_tables(self, conn: Connection, tables: TableRows) -> None:
        """Insert rows (dicts with the same keys) into each table, in the order given."""
        for table, rows in tables.items():
            if rows:
                conn.execute(insert(table), rows)

    def known_urls(self, urls: list[str]) -> dict[str, str]:
        """Card URL → agent id of those already registered."""
        with self._reads.connect() as conn:
            return {
                url: agent_id
                for url, agent_id in conn.execute(select(Agent.card_url, Agent.id).where(Agent.card_url.in_(urls)))
            }

    # -- changes to an agent -------------------------------------------------------------

    def replace_version(self, agent_pk: int, record: CardRecord, now: dt.datetime, audit: dict[str, Any]) -> int | None:
        """`write_version` in a transaction of its own."""
        with self.writing(), self.engine.begin() as conn:
            return self.write_version(conn, agent_pk, record, now, audit)

    def write_version(
        self, conn: Connection, agent_pk: int, record: CardRecord, now: dt.datetime, audit: dict[str, Any]
    ) -> int | None:
        """Make `record` the agent's current card, in the caller's transaction; its version, or
        None when the current card has the same content."""
        self.lock_agent(conn, agent_pk)
        current = conn.execute(
            select(Agent.id, Agent.card_sha256, Agent.status, Agent.signature_state).where(Agent.pk == agent_pk)
        ).one()
        if current.card_sha256 == record.sha256:
            return None
        version = _next_version(conn, agent_pk)  # after any invalid re-crawled version too
        conn.execute(update(AgentCard).where(AgentCard.agent_pk == agent_pk).values(is_current=False))
        old_tags = self._tags_counted(conn, agent_pk, current.status)
        self._unindex(conn, agent_pk)
        values = {**agent_values(record), "card_version": version, "updated_at": now}
        conn.execute(update(Agent).where(Agent.pk == agent_pk).values(**values))
        self.insert_tables(
            conn,
            {
                AgentCard.__table__: [card_values(record, agent_pk, version)],
                **trust_rows([(record.trust, agent_pk, version)]),
                **self._index_rows(conn, [(agent_pk, record, {**values, "status": current.status})]),
                AuditEntry.__table__: [{**audit, "agent_id": current.id, "detail": {"version": version}}],
            },
        )
        self._count_tags(conn, removed=old_tags)
        change_events.record_new_version(conn, agent_pk, current.signature_state, now)
        return version

    def write_rejected_version(
        self, conn: Connection, agent_pk: int, record: CardRecord, audit: dict[str, Any]
    ) -> bool:
        """Keep a re-crawled card that was not accepted as a non-current version (unless it is the
        latest version already), so the last accepted card stays current. True if stored."""
        latest = conn.scalar(
            select(AgentCard.sha256).where(AgentCard.agent_pk == agent_pk).order_by(AgentCard.version.desc()).limit(1)
        )
        if latest == record.sha256:
            return False
        version = _next_version(conn, agent_pk)
        agent_id = conn.scalar(select(Agent.id).where(Agent.pk == agent_pk))
        self.insert_tables(
            conn,
            {
                AgentCard.__table__: [{**card_values(record, agent_pk, version), "is_current": False}],
                **trust_rows([(record.trust, agent_pk, version)]),
                AuditEntry.__table__: [{**audit, "agent_id": agent_id, "detail": {"version": version}}],
            },
        )
        return True

    def set_status(self, agent_pk: int, changes: dict[str, Any], audit: dict[str, Any]) -> None:
        """Update status and message; the status term and tag counts follow."""
        with self.writing(), self.engine.begin() as conn:
            self.lock_agent(conn, agent_pk)
            was = conn.scalar(select(Agent.status).where(Agent.pk == agent_pk))
            conn.execute(update(Agent).where(Agent.pk == agent_pk).values(**changes))
            status = changes.get("status", was)
            if status != was:
                conn.execute(
                    update(AgentTerm)
                    .where(AgentTerm.agent_pk == agent_pk, AgentTerm.kind == "status")
                    .values(value=status)
                )
                if (was == ACTIVE) != (status == ACTIVE):
                    tags = self._tags(conn, agent_pk)
                    self._count_tags(
                        conn, added=tags if status == ACTIVE else (), removed=() if status == ACTIVE else tags
                    )
            self.insert_tables(conn, {AuditEntry.__table__: [audit]})
            change_events.record_status_change(conn, agent_pk, was, "status_message" in changes, audit["at"])

    def remove(self, agent_pk: int, audit: dict[str, Any]) -> None:
        """Delete the agent, its history and index rows; the audit log keeps the fact."""
        with self.writing(), self.engine.begin() as conn:
            self.lock_agent(conn, agent_pk)
            status = conn.scalar(select(Agent.status).where(Agent.pk == agent_pk))
            self._count_tags(conn, removed=self._tags_counted(conn, agent_pk, status))
            change_events.record_changes(conn, change_events.DELETED, {agent_pk: {}}, audit["at"])  # facts first
            self._unindex(conn, agent_pk)
            conn.execute(delete(Agent).where(Agent.pk == agent_pk))
            self.insert_tables(conn, {AuditEntry.__table__: [audit]})

    def _unindex(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(delete(AgentTerm).where(AgentTerm.agent_pk == agent_pk))  # no foreign key: see AgentTerm
        self.index.remove(conn, agent_pk)

    @staticmethod
    def _tags(conn: Connection, agent_pk: int) -> list[str]:
        return list(
            conn.scalars(select(AgentTerm.value).where(AgentTerm.agent_pk == agent_pk, AgentTerm.kind == "tag"))
        )

    def _tags_counted(self, conn: Connection, agent_pk: int, status: str | None) -> list[str]:
        return self._tags(conn, agent_pk) if status == ACTIVE else []

    def _count_tags(self, conn: Connection, added: Iterable[str] = (), removed: Iterable[str] = ()) -> None:
        """Active agents gained the `added` tags and lost the `removed` ones (`TagCounts`)."""
        self.insert_tables(conn, {TagCountDelta.__table__: TagCounts.delta_rows(added, removed)})

    # -- reads ----------------------------------------------------------------------------

    def agent(self, agent_id: str) -> Agent | None:
        """The agent's full row."""
        with self._sessions() as session:
            return session.scalar(select(Agent).where(Agent.id == agent_id))

    def ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` agent ids that start with `prefix`, in order (a string sorts before the
        longer ids it begins, so an id equal to `prefix` comes first)."""
        low, high = _id_range(prefix)
        statement = select(Agent.id).where(Agent.id >= low, func.substr(Agent.id, 1, len(prefix)) == prefix)
        if high is not None:
            statement = statement.where(Agent.id < high)
        with self._reads.connect() as conn:
            return list(conn.scalars(statement.order_by(Agent.id).limit(limit)))

    def listed(self, agent_id: str) -> Row[Any] | None:
        """The agent's `LISTED_COLUMNS`."""
        with self._reads.connect() as conn:
            return conn.execute(self._one, {"agent_id": agent_id}).first()

    def search(
        self, filters: SearchFilters, after: int, limit: int, columns: Sequence[str] | None = None
    ) -> list[Row[Any]]:
        """Up to `limit` agents (their `columns`, by default `LISTED_COLUMNS`) after pk `after`, in
        pk order, matching every filter."""
        with self._reads.connect() as conn, self.planned_for_values(conn):
            counts = {term: self._stats.count(conn, *term) for term in filters.counted_terms()}
            shape, params = self._search.plan(filters, counts)
            with self.walking_merged_ranges(conn) if shape.driver == "any" else nullcontext():
                rows = conn.execute(self._search.statement(shape, columns), {**params, "after": after, "limit": limit})
                return list(rows)

    # -- a ranked query's candidates (`registry.catalog.ranking`) -------------------------

    def term_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many agents hold each term, and about how many the text index holds."""
        with self._reads.connect() as conn:
            return self.index.held_by(conn, terms), self.index.document_count(conn)

    def candidates(self, arms: Sequence[Arm]) -> dict[int, Fields]:
        with self._reads.connect() as conn:
            return self.index.candidates(conn, arms)

    def documents(self, pks: Sequence[int]) -> dict[int, Fields]:
        with self._reads.connect() as conn:
            return self.index.documents(conn, pks)

    def embeddings_since(self, marker: Any) -> tuple[list[tuple[int, bytes]], Any]:
        with self._reads.connect() as conn:
            return self.index.embeddings_since(conn, marker)

    def cards(self, agent_id: str, version: int | None = None, *, every: bool = False) -> list[AgentCard]:
        """The current card, a given version, or (`every`) all versions in order."""
        statement = select(AgentCard).join(Agent, Agent.pk == AgentCard.agent_pk).where(Agent.id == agent_id)
        if every:
            statement = statement.order_by(AgentCard.version)
        elif version:
            statement = statement.where(AgentCard.version == version)
        else:
            statement = statement.where(AgentCard.is_current.is_(True))
        with self._sessions() as session:
            return list(session.scalars(statement))

    def tags(self, limit: int, prefix: str | None) -> list[tuple[str, int]]:
        with self._reads.connect() as conn:
            return TagCounts.read(conn, limit, prefix)

    def fold_tag_counts(self) -> int:
        with self.writing():
            return TagCounts.fold(self.engine)

    @contextmanager
    def _sessions(self) -> Iterator[Session]:
        with Session(self._reads, expire_on_commit=False) as session:
            yield session


def _next_version(conn: Connection, agent_pk: int) -> int:
    return int(conn.scalar(select(func.max(AgentCard.version)).where(AgentCard.agent_pk == agent_pk)) or 0) + 1


def _id_range(prefix: str) -> tuple[str, str | None]:
    """Bounds of the ids that start with `prefix`, so the look-up is a range of the unique index on
    `agents.id`; the substring test keeps the true matches. The ids this registry mints are UUIDs:
    bounded on their first 8 hex digits as a number, the range holds in any collation (a linguistic
    one such as en_US ignores "-" and ":", which would break a bound made by bumping the prefix's
    last character)."""
    head = prefix[:8]
    if len(head) == 8 and all(c in "0123456789abcdef" for c in head):
        after = int(head, 16) + 1
        return head, f"{after:08x}" if after < 16**8 else None
    following = ord(prefix[-1]) + 1  # an id of another shape: byte order
    if 0xD800 <= following <= 0xDFFF:
        following = 0xE000  # surrogates are no text (no driver encodes one): the next character
    return prefix, chr(following) if following <= 0x10FFFF else None  # after U+10FFFF, no bound
