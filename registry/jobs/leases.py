"""Leases: a table used as a work queue that any number of workers can drain without overlap.

A row is due when `due <= now` and its lease is free (`until` NULL or past). Claiming is one
`UPDATE … SET owner, until WHERE key IN (SELECT … due, free … LIMIT n) RETURNING …`; on PostgreSQL
the SELECT takes `FOR UPDATE SKIP LOCKED`, so claimers pass over each other's rows (SQLite has one
writer). A worker that dies stops renewing: its rows are claimable again when `until` passes.
Writes after the work are fenced by `hold`: an `UPDATE … RETURNING` that re-stamps the rows the
caller still owns, so they stay locked for the rest of its transaction (on SQLite, only a write
takes the lock before another claim can commit).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, Connection, FromClause, Integer, Row, TableClause, bindparam, or_, select, update
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.dml import ReturningUpdate, Update

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
        returning: Sequence[Returned] = (),
    ) -> list[Row[Any]]:
        """Lease up to `limit` due rows (earliest due first) to `owner`; return key + `returning`."""
        statement = self.claim_statement(returning=returning)
        return list(conn.execute(statement, self.claim_params(owner, now, seconds, limit)))

    def claim_statement(
        self,
        *,
        where: Sequence[ColumnElement[bool]] = (),
        then: Sequence[ColumnElement[bool]] = (),
        returning: Sequence[Returned] = (),
    ) -> ReturningUpdate[Any]:
        """`claim` as one statement, executed with `claim_params`. `where` narrows the due rows;
        `then` is checked only on the rows picked (for a condition the planner could misjudge)."""
        now = bindparam("b_now", type_=self.due.type)
        pick = (
            select(self.key)
            .where(self.due <= now, self.free(now), *where)
            .order_by(self.due)
            .limit(bindparam("b_limit", type_=Integer))
            .with_for_update(skip_locked=True)  # SQLite's compiler leaves it out: its one writer locks the database
        )
        until = bindparam("b_until", type_=self.until.type)
        lease = self._lease(bindparam("b_owner"), until, self.key.in_(pick.scalar_subquery()), *then)
        return lease.returning(self.key, *returning)

    @staticmethod
    def claim_params(owner: str, now: dt.datetime, seconds: float, limit: int) -> dict[str, Any]:
        return {"b_owner": owner, "b_now": now, "b_until": now + dt.timedelta(seconds=seconds), "b_limit": limit}

    def claim_key(
        self,
        conn: Connection,
        key: Any,
        *,
        owner: str,
        now: dt.datetime,
        seconds: float,
        returning: Sequence[Returned] = (),
    ) -> Row[Any] | None:
        """Lease one row whether or not it is due (a probe on demand); None if leased or absent."""
        lease = self._lease(owner, now + dt.timedelta(seconds=seconds), self.key == key, self.free(now))
        return conn.execute(lease.returning(self.key, *returning)).first()

    def hold(
        self,
        conn: Connection,
        keys: Iterable[Any],
        *,
        owner: str,
        now: dt.datetime,
        seconds: float,
        returning: Sequence[Returned] = (),
    ) -> dict[Any, Row[Any]]:
        """Of `keys`, the rows `owner` still leases, locked for this transaction, by key."""
        lease = self._lease(owner, now + dt.timedelta(seconds=seconds), self.key.in_(list(keys)), self.owner == owner)
        return {row[0]: row for row in conn.execute(lease.returning(self.key, *returning))}

    def _lease(self, owner: Any, until: Any, *where: ColumnElement[bool]) -> Update:
        """`UPDATE … SET owner, until WHERE …`, with values or bind parameters."""
        return update(cast(TableClause, self.table)).where(*where).values({self.owner: owner, self.until: until})
