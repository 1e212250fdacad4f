"""The listed agents seen whole, for what publishes all of them at once (the ARD manifest): has
anything changed, and which fixed blocks of registration numbers (pk ranges) hold listed agents.

"Listed" is what the default search lists (`CatalogSearch.search` with no filter): active, and not
down for longer than `hide_dead_after`. The two readings here are cheap in different ways: the
change marker is a handful of index look-ups, the blocks one pass over the agents.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, func, or_, select

from registry.audit import AuditEntry
from registry.catalog.models import Agent
from registry.db.types import utcnow


@dataclasses.dataclass(frozen=True)
class ListedBlock:
    """The listed agents whose pk is in block `number` (pks `(number-1)*size+1 … number*size`):
    how many, their pks' sum and their latest change, which together change when any of them
    is added, removed or rewritten."""

    number: int
    agents: int
    pk_sum: int
    updated_at: dt.datetime | None

    @property
    def fingerprint(self) -> tuple[int, int, dt.datetime | None]:
        return (self.agents, self.pk_sum, self.updated_at)


class CatalogListing:
    def __init__(
        self, engine: Engine, *, hide_dead_after: float | None, clock: Callable[[], dt.datetime] = utcnow
    ) -> None:
        self._engine = engine
        self._hide_dead_after = hide_dead_after
        self._clock = clock

    def change_marker(self) -> tuple[Any, ...]:
        """A value that changes whenever the listing may have: a registration (the highest pk), a
        change to an agent's card or status (the latest `updated_at`), a deletion (the audit log,
        which records every one in its transaction) and an agent passing the dead cutoff either
        way (the hidden agents). Index look-ups only, whatever the catalog's size."""
        agents = Agent.__table__
        marker = select(
            select(func.max(agents.c.pk)).scalar_subquery(),
            select(func.max(agents.c.updated_at)).scalar_subquery(),
            select(func.max(AuditEntry.__table__.c.id)).scalar_subquery(),
        )
        with self._engine.connect() as conn:
            row = conn.execute(marker).one()
            hidden = conn.execute(self._hidden_dead()).one() if self._hide_dead_after is not None else ()
        return (*row, *hidden)

    def blocks(self, size: int) -> list[ListedBlock]:
        """Every block of `size` pks that holds a listed agent, in order. One pass over the agents."""
        agents = Agent.__table__
        number = ((agents.c.pk - 1) // size + 1).label("number")
        query = (
            select(number, func.count(), func.sum(agents.c.pk), func.max(agents.c.updated_at))
            .where(*self._listed())
            .group_by(number)
            .order_by(number)
        )
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [ListedBlock(int(n), int(count), int(pk_sum), updated) for n, count, pk_sum, updated in rows]

    def _listed(self) -> list[ColumnElement[bool]]:
        # The default search's conditions (`registry.catalog.store_search`, `_agent_conditions`).
        agents = Agent.__table__
        conditions: list[ColumnElement[bool]] = [agents.c.status == "active"]
        if self._hide_dead_after is not None:
            conditions.append(or_(agents.c.health_state != "down", agents.c.health_since >= self._dead_cutoff()))
        return conditions

    def _hidden_dead(self) -> Any:
        agents = Agent.__table__
        # Exactly the agents `_listed` turns away for being dead (a null `health_since` included).
        since = agents.c.health_since
        hidden = and_(agents.c.health_state == "down", or_(since.is_(None), since < self._dead_cutoff()))
        return select(func.count(), func.coalesce(func.sum(agents.c.pk), 0)).where(hidden)

    def _dead_cutoff(self) -> dt.datetime:
        assert self._hide_dead_after is not None
        return self._clock() - dt.timedelta(seconds=self._hide_dead_after)
