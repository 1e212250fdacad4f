"""How many active agents carry each tag, kept as the catalog changes instead of counted per request.

`GET /v1/tags` used to group every tag row of every active agent: 82 ms over 10,000 agents on
SQLite and 180 ms on PostgreSQL, growing with the catalog. Now every write that changes an agent's
tags or whether it is active appends +1/-1 rows to `tag_count_deltas` in the transaction that makes
the change, and a read adds them to `tag_counts`: the answer is exact at once and costs one row per tag in use plus
the deltas not yet folded. The `tag-counts` job folds the deltas into `tag_counts` every few
seconds. Writers only ever insert deltas, so concurrent registrations never wait for each other on
a popular tag's counter row.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable

from sqlalchemy import Connection, Engine, delete, func, select, union_all
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from registry.db import DriverInsert
from registry.models import AgentTerm, TagCount, TagCountDelta

FOLD_EVERY = 2.0  # an empty fold is one DELETE that finds nothing


class TagCounts:
    """Writes the deltas (inside the caller's transaction), reads the counts and folds the deltas."""

    def __init__(self, dialect: str) -> None:
        self._deltas = DriverInsert(dialect, "tag_count_deltas", {"tag": "text", "delta": "integer"})
        upsert = postgresql_insert(TagCount) if dialect == "postgresql" else sqlite_insert(TagCount)
        self._upsert = upsert.on_conflict_do_update(
            index_elements=[TagCount.tag], set_={"count": TagCount.count + upsert.excluded.count}
        )

    def change(self, conn: Connection, added: Iterable[str] = (), removed: Iterable[str] = ()) -> None:
        """Record that active agents gained the `added` tags and lost the `removed` ones (a tag
        appears once per agent that gained or lost it). One row per tag: an import of 1,000
        agents appends a few hundred rows, not five thousand."""
        net = collections.Counter(added)
        net.subtract(removed)
        self._deltas.run(conn, [(tag, n) for tag, n in net.items() if n])

    @staticmethod
    def agent_tags(conn: Connection, agent_pk: int) -> set[str]:
        """The tags an agent is counted under, as its tag terms hold them."""
        return set(conn.scalars(select(AgentTerm.value).where(AgentTerm.agent_pk == agent_pk, AgentTerm.kind == "tag")))

    @staticmethod
    def read(conn: Connection, limit: int, prefix: str | None = None) -> list[tuple[str, int]]:
        """(tag, active agents carrying it), most used first, then by tag; only tags in use."""
        folded = select(TagCount.tag.label("tag"), TagCount.count.label("n"))
        pending = select(TagCountDelta.tag.label("tag"), TagCountDelta.delta.label("n"))
        if prefix:
            folded = folded.where(TagCount.tag.startswith(prefix, autoescape=True))
            pending = pending.where(TagCountDelta.tag.startswith(prefix, autoescape=True))
        rows = union_all(folded, pending).subquery()
        total = func.sum(rows.c.n)
        stmt = (
            select(rows.c.tag, total.label("count")).group_by(rows.c.tag).having(total > 0)
            .order_by(total.desc(), rows.c.tag).limit(limit)
        )
        return [(row.tag, int(row.count)) for row in conn.execute(stmt)]

    def fold(self, engine: Engine) -> int:
        """Move every committed delta into `tag_counts` in one transaction; return how many.

        The deltas are deleted and returned by one statement, so a delta committed meanwhile is
        either folded or left for the next fold, never lost or counted twice; a read sees the
        counts either before or after the fold, both exact.
        """
        with engine.begin() as conn:
            moved = conn.execute(delete(TagCountDelta).returning(TagCountDelta.tag, TagCountDelta.delta)).all()
            if not moved:
                return 0
            sums: collections.Counter[str] = collections.Counter()
            for tag, delta in moved:
                sums[tag] += delta
            changed = [{"tag": tag, "count": n} for tag, n in sorted(sums.items()) if n]
            if changed:
                conn.execute(self._upsert, changed)
                conn.execute(delete(TagCount).where(TagCount.count <= 0))
        return len(moved)
