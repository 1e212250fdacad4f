"""Leases: a table used as a work queue that any number of workers can drain without overlap.

A row is due when `due <= now` and its lease is free (`until` is NULL or past). Claiming is one
statement, `UPDATE … SET owner, until WHERE key IN (SELECT … due, free … LIMIT n) RETURNING …`:
on SQLite the statement holds the database's single write lock, so two claimers in one process
serialise; on PostgreSQL the inner SELECT takes `FOR UPDATE SKIP LOCKED`, so claimers in many
processes pass over each other's rows instead of waiting for them. A worker that dies simply
stops renewing: its rows become claimable again when `until` passes.

Writes after the work are fenced: `hold` returns the rows the caller still owns, locked for the
rest of its transaction, and only those are written. On PostgreSQL that is `SELECT … FOR UPDATE`
(no new row version); on SQLite an `UPDATE … RETURNING` that re-stamps them, because only a write
takes SQLite's lock before anyone else can commit a claim in between.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, Connection, FromClause, Integer, Row, TableClause, bindparam, or_, select, update
from sqlalchemy.orm import QueryableAttribute

# What a claim may return besides the key: a table's column or a model's attribute.
Returned = ColumnElement[Any] | QueryableAttribute[Any]


@dataclasses.dataclass(frozen=True)
class LeaseColumns:
    """The columns that make `table` a leased work queue."""

    table: FromClause
    key: ColumnElement[Any]
    due: ColumnElement[Any]
    owner: ColumnElement[Any]
    until: ColumnElement[Any]
    _holds: dict[tuple[int, ...], Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @property
    def _target(self) -> TableClause:
        return cast(TableClause, self.table)  # a model's `__table__`: a Table, typed as a FromClause

    def free(self, now: Any) -> ColumnElement[bool]:
        return or_(self.until.is_(None), self.until <= now)

    def claim(
        self,
        conn: Connection,
        *,
        owner: str,
        now: dt.datetime,
        seconds: float,
        limit: int,
        where: Sequence[ColumnElement[bool]] = (),
        then: Sequence[ColumnElement[bool]] = (),
        returning: Sequence[Returned] = (),
    ) -> list[Row[*tuple[Any, ...]]]:
        """Lease up to `limit` due rows (earliest due first) to `owner`; return key + `returning`.

        `then`: conditions checked only on the rows picked (at most `limit`), where a condition
        the planner could misjudge over the whole queue costs one probe per row.
        """
        statement = self.claim_statement(where=where, then=then, returning=returning)
        return list(conn.execute(statement, self.claim_params(owner, now, seconds, limit)))

    def claim_statement(
        self,
        *,
        where: Sequence[ColumnElement[bool]] = (),
        then: Sequence[ColumnElement[bool]] = (),
        returning: Sequence[Returned] = (),
    ) -> Any:
        """`claim` as one statement built once, for a hot queue (no statement to build and look up
        on each claim), executed with `claim_params`. Being one statement, it may run in autocommit."""
        now = bindparam("b_now", type_=self.due.type)
        pick = (
            select(self.key).where(self.due <= now, self.free(now), *where)
            .order_by(self.due).limit(bindparam("b_limit", type_=Integer))
            .with_for_update(skip_locked=True)  # SQLite's compiler leaves it out: its one writer locks the database
        )
        return (
            update(self._target).where(self.key.in_(pick.scalar_subquery()), *then)
            .values({self.owner: bindparam("b_owner"), self.until: bindparam("b_until", type_=self.until.type)})
            .returning(self.key, *returning)
        )

    @staticmethod
    def claim_params(owner: str, now: dt.datetime, seconds: float, limit: int) -> dict[str, Any]:
        return {"b_owner": owner, "b_now": now, "b_until": now + dt.timedelta(seconds=seconds), "b_limit": limit}

    def claim_key(
        self, conn: Connection, key: Any, *, owner: str, now: dt.datetime, seconds: float,
        returning: Sequence[Returned] = (),
    ) -> Row[*tuple[Any, ...]] | None:
        """Lease one row whether or not it is due (a probe on demand); None if leased or absent."""
        rows = self._lease(conn, (self.key == key) & self.free(now), owner, now, seconds, returning)
        return rows[0] if rows else None

    def hold(
        self, conn: Connection, keys: Iterable[Any], *, owner: str, now: dt.datetime, seconds: float,
        returning: Sequence[Returned] = (),
    ) -> dict[Any, Row[*tuple[Any, ...]]]:
        """Of `keys`, the rows `owner` still leases, locked for this transaction, by key."""
        keys = list(keys)
        if not keys:
            return {}
        if conn.dialect.name == "postgresql":
            rows = list(conn.execute(self._hold_select(returning), {"b_keys": keys, "b_owner": owner}))
        else:
            rows = self._lease(conn, self.key.in_(keys) & (self.owner == owner), owner, now, seconds, returning)
        return {row[0]: row for row in rows}

    def _hold_select(self, returning: Sequence[Returned]) -> Any:
        """`SELECT … FOR UPDATE` of the rows in `b_keys` that `b_owner` leases, built once per `returning`."""
        shape = tuple(id(column) for column in returning)
        statement = self._holds.get(shape)
        if statement is None:
            statement = self._holds[shape] = (
                select(self.key, *returning)
                .where(self.key.in_(bindparam("b_keys", expanding=True)), self.owner == bindparam("b_owner"))
                .with_for_update()
            )
        return statement

    def _lease(
        self, conn: Connection, condition: ColumnElement[bool], owner: str, now: dt.datetime, seconds: float,
        returning: Sequence[Returned],
    ) -> list[Row[*tuple[Any, ...]]]:
        until = now + dt.timedelta(seconds=seconds)
        stmt = (
            update(self._target).where(condition)
            .values({self.owner: owner, self.until: until})
            .returning(self.key, *returning)
        )
        return list(conn.execute(stmt))
