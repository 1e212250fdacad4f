"""The crawl's tables (`models.py`): the domains crawled and what their manifests list. Every write
is an upsert on the natural key (a domain; a source and identifier), so a registration and a
scheduled re-crawl of the same domain at once agree; an agent once registered by a manifest stays
`owned` by its listing whatever the order of the writes."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, Insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from registry.catalog import Agent
from registry.db import writer_lock
from registry.discovery.crawl.models import ManifestListing, ManifestSource
from registry.errors import NotFound

LISTINGS = ManifestListing.__table__
SOURCES = ManifestSource.__table__


@dataclasses.dataclass(frozen=True)
class Held:
    """A listing as stored, with its agent's id and status (None: the agent was deleted)."""

    identifier: str
    agent_pk: int | None
    agent_id: str | None
    status: str | None
    status_message: str | None
    entry_url: str | None
    entry_sha256: str
    owned: bool
    listed: bool
    deprecated: bool


@dataclasses.dataclass(frozen=True)
class KnownAgent:
    pk: int
    id: str
    owner_id: int | None


@dataclasses.dataclass(frozen=True)
class SourceState:
    """A crawled domain as stored."""

    pk: int
    domain: str
    manifest_url: str
    owner_id: int | None


class ListingStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = writer_lock(engine)  # SQLite's one writer; nothing on PostgreSQL

    # -- sources --------------------------------------------------------------------------

    def source(self, domain: str) -> SourceState | None:
        columns = (SOURCES.c.pk, SOURCES.c.domain, SOURCES.c.manifest_url, SOURCES.c.owner_id)
        with self._engine.connect() as conn:
            row = conn.execute(select(*columns).where(SOURCES.c.domain == domain)).first()
        return SourceState(row.pk, row.domain, row.manifest_url, row.owner_id) if row else None

    def save_source(self, values: dict[str, Any]) -> int:
        """Insert or update the domain's row (`values` holds every column but the lease and pk;
        an existing row keeps its owner and creation time); its pk."""
        statement = self._insert(SOURCES)
        kept = {"pk", "domain", "owner_id", "created_at"}
        statement = statement.on_conflict_do_update(
            index_elements=[SOURCES.c.domain],
            set_={name: statement.excluded[name] for name in values if name not in kept},
        )
        with self._writer.hold(), self._engine.begin() as conn:
            conn.execute(statement, values)
            return int(conn.execute(select(SOURCES.c.pk).where(SOURCES.c.domain == values["domain"])).scalar_one())

    # -- listings -------------------------------------------------------------------------

    def held(self, source_pk: int) -> dict[str, Held]:
        """The source's listings by identifier."""
        statement = (
            select(
                LISTINGS.c.identifier,
                LISTINGS.c.agent_pk,
                Agent.id,
                Agent.status,
                Agent.status_message,
                LISTINGS.c.entry_url,
                LISTINGS.c.entry_sha256,
                LISTINGS.c.owned,
                LISTINGS.c.listed,
                LISTINGS.c.deprecated,
            )
            .outerjoin(Agent, Agent.pk == LISTINGS.c.agent_pk)
            .where(LISTINGS.c.source_pk == source_pk)
        )
        with self._engine.connect() as conn:
            return {row.identifier: Held(*row) for row in conn.execute(statement)}

    def known_cards(self, card_urls: Sequence[str]) -> dict[str, KnownAgent]:
        """Card URL → the agent registered at it, of those that are."""
        found: dict[str, KnownAgent] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(card_urls), 500):
                chunk = list(card_urls[start : start + 500])
                statement = select(Agent.card_url, Agent.pk, Agent.id, Agent.owner_id).where(Agent.card_url.in_(chunk))
                found.update(
                    {row.card_url: KnownAgent(row.pk, row.id, row.owner_id) for row in conn.execute(statement)}
                )
        return found

    def agent_pks(self, agent_ids: Sequence[str]) -> dict[str, int]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(Agent.id, Agent.pk).where(Agent.id.in_(list(agent_ids))))
            return {row.id: row.pk for row in rows}

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Upsert listings seen in a crawl (each row: every column but pk). `first_listed_at` stays
        that of the first crawl; `owned` once true stays true."""
        if not rows:
            return
        statement = self._insert(LISTINGS)
        fixed = {"pk", "source_pk", "identifier", "first_listed_at", "owned"}
        changes = {name: statement.excluded[name] for name in rows[0] if name not in fixed}
        statement = statement.on_conflict_do_update(
            index_elements=[LISTINGS.c.source_pk, LISTINGS.c.identifier],
            set_={**changes, "owned": or_(LISTINGS.c.owned, statement.excluded.owned)},
        )
        with self._writer.hold(), self._engine.begin() as conn:
            conn.execute(statement, rows)

    def delist(self, source_pk: int, identifiers: Sequence[str], deprecated: set[str], now: dt.datetime) -> None:
        """Mark listings no longer listed; `deprecated`: those whose agent the crawl deprecated."""
        if not identifiers:
            return
        listing = ManifestListing
        statement = update(listing).where(listing.source_pk == source_pk, listing.identifier.in_(identifiers))
        with self._writer.hold(), self._engine.begin() as conn:
            conn.execute(statement.values(listed=False, delisted_at=now))
            if deprecated:
                marked = statement.where(listing.identifier.in_(sorted(deprecated)))
                conn.execute(marked.values(deprecated=True))

    def listed_by(self, agent_id: str) -> list[dict[str, Any]]:
        """Where an agent is (or was) listed: the domain, its manifest, the catalog and identifier.
        Raises NotFound when there is no such agent."""
        statement = (
            select(LISTINGS, SOURCES.c.domain, SOURCES.c.manifest_url)
            .join(SOURCES, SOURCES.c.pk == LISTINGS.c.source_pk)
            .join(Agent, Agent.pk == LISTINGS.c.agent_pk)
            .where(Agent.id == agent_id)
            .order_by(LISTINGS.c.first_listed_at, LISTINGS.c.pk)
        )
        with self._engine.connect() as conn:
            rows = [dict(row._mapping) for row in conn.execute(statement)]
            if not rows and conn.scalar(select(Agent.pk).where(Agent.id == agent_id)) is None:
                raise NotFound(f"no agent with id {agent_id!r}")
        return rows

    def _insert(self, table: Any) -> Any:
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        statement: Insert = dialect.insert(table)
        return statement
