"""The change-event outbox: one row per change to an agent, written in the transaction that makes the
change, so that a crash never loses an event nor leaves one for a change that did not commit.

Catalog, health and trust write here (a domain may not import another, so the table is plumbing,
like `registry.audit`); `registry.events` fans the rows out to the subscribers and deletes them.
Writing costs one small row: nothing here looks for subscribers.

An agent's events are numbered (`pk`) in the order its changes commit: every writer holds the
agent's row (inserted, locked or updated) before it adds the event, so a later change of the same
agent waits for the earlier one's commit before it draws its number.

Nothing is told of an entry that is not listed (`UNLISTED`: pending review, or rejected): search,
pages and manifests hide it, and its events would show it to every follower. Its first event is
the `.registered` of its approval, when it becomes visible.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import JSON, BigInteger, Connection, Integer, String, column, insert, select, table
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

PREFIX = "io.agentdex.agent."
REGISTERED = PREFIX + "registered"
UPDATED = PREFIX + "updated"
DEPRECATED = PREFIX + "deprecated"
DELETED = PREFIX + "deleted"
HEALTH_CHANGED = PREFIX + "health_changed"
SIGNATURE_CHANGED = PREFIX + "signature_changed"
EVENT_TYPES = (REGISTERED, UPDATED, DEPRECATED, DELETED, HEALTH_CHANGED, SIGNATURE_CHANGED)
# The statuses of entries kept out of every listing (`registry.catalog.UNLISTED`, read here by
# value as plumbing imports no domain; a test checks they agree).
UNLISTED = ("pending", "rejected")

# The catalog's `agents` columns an event tells (read by name: plumbing imports no domain; a test
# checks that `registry.catalog.models` agrees).
FACT_COLUMNS = (
    "pk",
    "id",
    "name",
    "card_url",
    "owner_id",
    "status",
    "card_version",
    "version",
    "tags",
    "health_state",
    "signature_state",
)
AGENTS = table("agents", *(column(name) for name in FACT_COLUMNS))


class ChangeEvent(Base):
    """A committed change not yet fanned out. `data` is the CloudEvent's data as of the change (with
    the owner's principal id, which the fan-out matches and replaces by the owner's name)."""

    __tablename__ = "change_events"
    # AUTOINCREMENT on SQLite: the fan-out empties the table, and a number must never come back.
    __table_args__ = {"sqlite_autoincrement": True}

    pk: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    id: Mapped[str] = mapped_column(String(40))  # the CloudEvent id: the same in every delivery
    type: Mapped[str] = mapped_column(String(60))
    agent_id: Mapped[str] = mapped_column(String(40))
    at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


def agent_data(facts: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """An event's data from the agent's `FACT_COLUMNS` (a mapping or row) and what the change adds:
    `health_previous`, `signature_previous` (the state before), `change` (what an update changed)."""
    data = {
        "id": facts["id"],
        "name": facts["name"],
        "cardUrl": facts["card_url"],
        "ownerId": facts["owner_id"],
        "status": facts["status"],
        "cardVersion": facts["card_version"],
        "version": facts["version"],
        "tags": list(facts["tags"] or ()),
        "health": {"state": facts["health_state"], "previous": changes.get("health_previous")},
        "signature": {"state": facts["signature_state"], "previous": changes.get("signature_previous")},
    }
    if "change" in changes:
        data["change"] = changes["change"]
    return data


def event_row(kind: str, data: dict[str, Any], at: dt.datetime) -> dict[str, Any]:
    """A `change_events` row (for a caller that inserts it with its other rows)."""
    return {"id": str(uuid.uuid4()), "type": kind, "agent_id": data["id"], "at": at, "data": data}


def registered_rows(new_agents: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `.registered` events of new agents, from the columns each is inserted with: none for
    an agent that waits for review (its approval announces it)."""
    return _announced([event_row(REGISTERED, agent_data(columns), columns["created_at"]) for columns in new_agents])


def _announced(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows about agents that are listed: nothing is told of an unlisted one."""
    return [row for row in rows if row["data"]["status"] not in UNLISTED]


def agent_facts(conn: Connection, agent_pks: Iterable[int]) -> dict[int, Any]:
    """The agents' `FACT_COLUMNS` as they stand in the caller's transaction, by pk."""
    pks = sorted(set(agent_pks))
    if not pks:
        return {}
    return {row.pk: row._mapping for row in conn.execute(select(AGENTS).where(AGENTS.c.pk.in_(pks)))}


def record(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert `event_row`s in the caller's transaction, in the order given, but those of unlisted
    agents (whatever the change: a card, health or signature change, a claim, a deletion)."""
    rows = _announced(rows)
    if rows:
        conn.execute(insert(ChangeEvent), rows)


def record_changes(conn: Connection, kind: str, changes: Mapping[int, Mapping[str, Any]], at: dt.datetime) -> None:
    """One `kind` event per changed agent (pk → what `agent_data` adds), its facts read in the
    caller's transaction after the change (the caller holds the agent's row)."""
    facts = agent_facts(conn, changes)
    record(conn, [event_row(kind, agent_data(facts[pk], **extra), at) for pk, extra in changes.items() if pk in facts])


def record_new_version(conn: Connection, agent_pk: int, signature_before: str, at: dt.datetime) -> None:
    """A new current card: `.updated`, and `.signature_changed` when its signature state differs."""
    facts = agent_facts(conn, [agent_pk])[agent_pk]
    previous = signature_before if facts["signature_state"] != signature_before else None
    rows = [event_row(UPDATED, agent_data(facts, change="card", signature_previous=previous), at)]
    if previous is not None:
        rows.append(event_row(SIGNATURE_CHANGED, agent_data(facts, signature_previous=previous), at))
    record(conn, rows)


def record_status_change(conn: Connection, agent_pk: int, was: str | None, message_set: bool, at: dt.datetime) -> None:
    """Listed for the first time (an approved review): `.registered`; deprecated: `.deprecated`;
    active again or a new status message: `.updated`; else (and while unlisted) nothing."""
    facts = agent_facts(conn, [agent_pk])[agent_pk]
    if was in UNLISTED and facts["status"] not in UNLISTED:
        kind, change = REGISTERED, None
    elif facts["status"] != was:
        kind, change = (DEPRECATED, None) if facts["status"] == "deprecated" else (UPDATED, "status")
    elif message_set:
        kind, change = UPDATED, "statusMessage"
    else:
        return
    record(conn, [event_row(kind, agent_data(facts, **({"change": change} if change else {})), at)])
