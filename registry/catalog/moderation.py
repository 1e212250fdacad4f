"""Writes to an entry that are not its registrant's own changes: settling a review (an entry that
waits as `pending` is approved, or rejected with a reason) and handing the entry to another
principal. Who may make them is decided by the caller (`registry.ownership`); the catalog writes
each in one transaction with its audit row and change event."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, select, update

from registry import change_events
from registry.audit import AuditEntry
from registry.auth import Actor, Principal
from registry.catalog.models import Agent
from registry.catalog.store import CatalogStore
from registry.db.types import utcnow
from registry.errors import NotFound


class CatalogModeration:
    def __init__(self, store: CatalogStore, *, clock: Callable[[], dt.datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock

    def agent(self, agent_id: str) -> Agent:
        """Raises NotFound."""
        agent = self._store.agent(agent_id)
        if agent is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        return agent

    def settle(self, actor: Actor, agent: Agent, status: str, message: str | None, action: str) -> None:
        """Set the entry's status (and status message: a rejection's reason), audited as `action`;
        its status term, tag counts and `.updated` event follow (`CatalogStore.set_status`)."""
        now = self._clock()
        audit = _audit(actor, action, agent.id, now, {"status": status, "message": message})
        if agent.owner_id != actor.principal_id:  # the registrant reads the verdict in their audit log
            audit["subject_principal_id"] = agent.owner_id
        self._store.set_status(agent.pk, {"status": status, "status_message": message, "updated_at": now}, audit)

    def hand_over(self, actor: Actor, agent: Agent, owner_id: int, action: str) -> bool:
        """Make `owner_id` the entry's owner; nothing else about it changes (its `updated_at`
        neither: what a mirror reads of it is the same). The audit row names both owners, its subject
        the previous one (who reads it in their own audit log); the `.updated` event says
        `change: "owner"`. False when `owner_id` holds it already."""
        now = self._clock()
        with self._store.writing(), self._store.engine.begin() as conn:
            self._store.lock_agent(conn, agent.pk)
            was = conn.scalar(select(Agent.owner_id).where(Agent.pk == agent.pk))
            if was == owner_id:
                return False
            conn.execute(update(Agent).where(Agent.pk == agent.pk).values(owner_id=owner_id))
            names = _names(conn, [was, owner_id])
            detail = {
                "previousOwner": names.get(was),
                "previousOwnerId": was,
                "newOwner": names.get(owner_id),
                "newOwnerId": owner_id,
            }
            audit = _audit(actor, action, agent.id, now, detail) | {"subject_principal_id": was}
            self._store.insert_tables(conn, {AuditEntry.__table__: [audit]})
            change_events.record_changes(conn, change_events.UPDATED, {agent.pk: {"change": "owner"}}, now)
        return True


def _names(conn: Connection, ids: list[int | None]) -> dict[int | None, str]:
    rows = conn.execute(select(Principal.id, Principal.name).where(Principal.id.in_([i for i in ids if i is not None])))
    return {row.id: row.name for row in rows}


def _audit(actor: Actor, action: str, agent_id: str, at: dt.datetime, detail: dict[str, Any]) -> dict[str, Any]:
    return {"at": at, "principal_id": actor.principal_id, "action": action, "agent_id": agent_id, "detail": detail}
