"""How many active agents carry each tag, kept as the catalog changes instead of counted per request.

Counting on request would group every tag row of every active agent, a cost that grows with the
catalog. Instead every write that changes an agent's
tags or whether it is active appends one row per tag it changes (+n/-n) to `tag_count_deltas`, in
the transaction that makes the change, and a read adds them to `tag_counts`: the answer is exact at
once and costs one row per tag in use plus the deltas not yet folded. The `tag-counts` job folds
the deltas into `tag_counts` every few seconds. Writers only ever insert deltas, so concurrent
registrations never wait for each other on a popular tag's counter row.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Engine, Select, bindparam, delete, func, select, text, union_all

from registry.catalog.models import TagCount, TagCountDelta


def _read_statement(by_prefix: bool) -> Select[str, int]:
    """The counts, folded and pending, of the tags (LIKE `:pattern`, escaped with "/"), `:limit` of them."""
    folded = select(TagCount.tag.label("tag"), TagCount.count.label("n"))
    pending = select(TagCountDelta.tag.label("tag"), TagCountDelta.delta.label("n"))
    if by_prefix:
        folded = folded.where(TagCount.tag.like(bindparam("pattern"), escape="/"))
        pending = pending.where(TagCountDelta.tag.like(bindparam("pattern"), escape="/"))
    rows = union_all(folded, pending).subquery()
    total = func.sum(rows.c.n)
    return (
        select(rows.c.tag, total.label("count"))
        .group_by(rows.c.tag)
        .having(total > 0)
        .order_by(total.desc(), rows.c.tag)
        .limit(bindparam("limit"))
    )


# Built once, not per request: SQLAlchemy then finds its compiled form by identity.
_READ = {by_prefix: _read_statement(by_prefix) for by_prefix in (False, True)}


class TagCounts:
    """Writes the deltas (inside the caller's transaction), reads the counts and folds the deltas."""

    @classmethod
    def delta_rows(cls, added: Iterable[str] = (), removed: Iterable[str] = ()) -> list[dict[str, Any]]:
        """The `tag_count_deltas` rows of a change: active agents gained the `added` tags and lost
        the `removed` ones (a tag appears once per agent). One row per tag changed."""
        return [{"tag": tag, "delta": delta} for tag, delta in cls.net(added, removed)]

    @staticmethod
    def net(added: Iterable[str] = (), removed: Iterable[str] = ()) -> list[tuple[str, int]]:
        """The delta rows of a change: (tag, net change), changed tags only."""
        net = collections.Counter(added)
        net.subtract(removed)
        return [(tag, n) for tag, n in net.items() if n]

    @staticmethod
    def read(conn: Connection, limit: int, prefix: str | None = None) -> list[tuple[str, int]]:
        """(tag, active agents carrying it), most used first, then by tag; only tags in use."""
        params: dict[str, object] = {"limit": limit}
        if prefix:
            params["pattern"] = prefix.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"
        return [(tag, int(count)) for tag, count in conn.execute(_READ[bool(prefix)], params)]

    @staticmethod
    def fold(engine: Engine) -> int:
        """Move every committed delta into `tag_counts` in one transaction, summed in the database;
        return how many tags' counts changed.

        No delta is lost or counted twice. On PostgreSQL the deltas are deleted and summed by one
        statement, so one committed meanwhile is left for the next fold. On SQLite the caller holds
        the one writer (`CatalogStore.fold_tag_counts`), so none can be committed meanwhile. A read sees
        the counts before or after the fold, both exact.
        """
        with engine.connect() as conn:
            if conn.scalar(select(TagCountDelta.id).limit(1)) is None:
                return 0  # no write lock taken for nothing
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                changed = conn.execute(_FOLD_POSTGRESQL).rowcount
            else:
                changed = conn.execute(_FOLD_SQLITE).rowcount
                conn.execute(delete(TagCountDelta))
            if changed:
                conn.execute(delete(TagCount).where(TagCount.count <= 0))
        return max(changed, 0)


# Sums in tag order: two folds at once upsert the same tags in the same order (no deadlock).
_FOLD_POSTGRESQL = text(
    "WITH moved AS (DELETE FROM tag_count_deltas RETURNING tag, delta) "
    "INSERT INTO tag_counts AS c (tag, count) "
    "SELECT tag, SUM(delta) FROM moved GROUP BY tag HAVING SUM(delta) <> 0 ORDER BY tag "
    "ON CONFLICT (tag) DO UPDATE SET count = c.count + EXCLUDED.count"
)
# `WHERE true`: SQLite's parser needs a WHERE before an upsert's ON CONFLICT after a SELECT.
_FOLD_SQLITE = text(
    "INSERT INTO tag_counts (tag, count) "
    "SELECT tag, SUM(delta) FROM tag_count_deltas WHERE true GROUP BY tag HAVING SUM(delta) <> 0 ORDER BY tag "
    "ON CONFLICT (tag) DO UPDATE SET count = tag_counts.count + excluded.count"
)
