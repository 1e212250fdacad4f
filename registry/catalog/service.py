"""Registering, replacing and removing agents. Fetch and validate first, then write in one
transaction: nothing half-written is ever left behind."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from registry import jsontext
from registry.db import single_statements, writer_lock
from registry.errors import (
    Conflict,
    Forbidden,
    InvalidCard,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    SignatureRequired,
)
from registry.schema import Agent, AgentCard
from registry.db.types import utcnow
from registry.catalog.fetcher import CardFetcher, FetchedCard, NotModified
from registry.catalog.card_urls import canonical_card_url
from registry.catalog.index import AUDIT_INSERT, CardRecord, CatalogWriter, NewAgent, agent_values
from registry.db.group_commit import GroupCommitter
from registry.catalog.tag_counts import TagCounts
from registry.auth.tokens import Actor
from registry.trust.service import TrustService
from registry.trust.keys import KeyScope
from registry.trust.rows import refresh_current_trust
from registry.trust.state import CardTrust
from registry.validation import CardLimits, summarize_card, validate_card

STATUSES = ("active", "deprecated")
IMPORT_ITEM_FIELDS = frozenset({"card", "cardUrl", "jwksUrl"})
# What a just-registered agent shows before its first probe (the columns' server defaults).
NEW_AGENT_HEALTH = {"health_state": "unknown", "health_checked_at": None, "health_latency_ms": None,
                    "health_reason": None, "health_uptime24h": None}


@dataclasses.dataclass(frozen=True)
class AgentSnapshot:
    """An agent as just written, shaped like the rows the API presents (saves a read-back)."""

    agent: SimpleNamespace

    @classmethod
    def of(cls, columns: dict[str, Any]) -> AgentSnapshot:
        return cls(SimpleNamespace(**columns))


@dataclasses.dataclass(frozen=True)
class ImportOutcome:
    """One line of a bulk import: the new agent id, or the error that stopped it."""

    index: int
    agent_id: str | None = None
    error: dict[str, Any] | None = None


class CatalogService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        fetcher: CardFetcher,
        limits: CardLimits,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        trust: TrustService | None = None,
    ) -> None:
        self._sessions = sessions
        self._trust = trust
        self._fetcher = fetcher
        self._limits = limits
        self._clock = clock
        self._new_id = new_id
        self._engine = sessions.kw["bind"]
        self._autocommit = single_statements(self._engine)
        self._writer = CatalogWriter(self._engine.dialect)
        self._committer: GroupCommitter[tuple[NewAgent, Any]] = GroupCommitter(
            self._write_registrations, lambda item: self._write_registrations([item]),
            serialize=writer_lock(self._engine).hold,
        )

    @property
    def tag_counts(self) -> TagCounts:
        """The tag counts this service keeps as it writes (folded by the `tag-counts` job)."""
        return self._writer.tag_counts

    # -- registration ---------------------------------------------------------------------

    def register_from_url(self, actor: Actor, url: str, jwks_url: str | None = None) -> AgentSnapshot:
        """Discover, fetch, validate, verify and store an agent. Returns it as stored.

        Raises InvalidRequest, Conflict, InvalidCard, SignatureRequired and the fetcher's errors.
        """
        self._refuse_known_url(canonical_card_url(url))
        scope = self._new_scope(actor, jwks_url)
        fetched = self._fetcher.discover(url)
        with self._committer.expecting():
            record = self._record_from_fetch(fetched, canonical_card_url(fetched.card_url), scope)
            return self._insert_one(actor, record, scope)

    def register_card(self, actor: Actor, card: object, card_url: str, raw: bytes | None = None,
                      jwks_url: str | None = None) -> AgentSnapshot:
        """Store an uploaded card (source `pushed`). Raises InvalidRequest, Conflict, InvalidCard,
        SignatureRequired."""
        with self._committer.expecting():
            scope = self._new_scope(actor, jwks_url)
            record = self._record(card, raw, canonical_card_url(card_url), source="pushed", scope=scope)
            return self._insert_one(actor, record, scope)

    def import_cards(self, actor: Actor, items: list[Any]) -> list[ImportOutcome]:
        """Register many uploaded cards at once; each item succeeds or fails on its own."""
        outcomes: list[ImportOutcome] = []
        batch: list[tuple[int, CardRecord]] = []
        scopes: dict[int, KeyScope | None] = {}
        shared_scope = self._new_scope(actor, None)
        for index, item in enumerate(items):
            try:
                scopes[index] = self._import_scope(actor, item, shared_scope)
                batch.append((index, self._import_record(item, scopes[index])))
            except (InvalidRequest, InvalidCard, PayloadTooLarge, SignatureRequired) as error:
                outcomes.append(ImportOutcome(index, error=_error_dict(error)))
        outcomes.extend(self._insert_batch(actor, batch, scopes))
        return sorted(outcomes, key=lambda o: o.index)

    # -- changes to an existing agent -----------------------------------------------------

    def replace_card(self, actor: Actor, agent_id: str, card: object, raw: bytes | None = None) -> bool:
        """Store a pushed card as the agent's new version. Returns False when nothing changed."""
        agent = self._owned(actor, agent_id)
        record = self._record(card, raw, agent.card_url, source="pushed", scope=self._scope_of(agent))
        return self._new_version(actor, agent.pk, record, "card.replace")

    def refresh(self, actor: Actor, agent_id: str) -> bool:
        """Re-fetch the agent's card now. Returns False when the card did not change."""
        agent = self._owned(actor, agent_id)
        fetched = self._fetcher.fetch(agent.card_url)
        if isinstance(fetched, NotModified):
            return False
        record = self._record_from_fetch(fetched, agent.card_url, self._scope_of(agent))
        return self._new_version(actor, agent.pk, record, "card.refresh")

    def update_status(self, actor: Actor, agent_id: str, status: str | None, message: str | None) -> None:
        """Set `active`/`deprecated` and a status message. Raises InvalidRequest, NotFound, Forbidden."""
        if status is not None and status not in STATUSES:
            raise InvalidRequest(f"status must be one of {list(STATUSES)}, not {status!r}")
        agent = self._owned(actor, agent_id)
        changes: dict[str, Any] = {"updated_at": self._clock()}
        if status is not None:
            changes["status"] = status
        if message is not None:
            changes["status_message"] = message or None
        with self._engine.begin() as conn:
            conn.execute(update(Agent).where(Agent.pk == agent.pk).values(**changes))
            if status is not None:
                self._writer.set_status(conn, agent.pk, status)
            self._audit(conn, actor, "agent.status", agent_id, {"status": status, "message": message})

    def delete(self, actor: Actor, agent_id: str) -> None:
        """Remove the agent, its history and index rows; the audit log keeps the fact."""
        agent = self._owned(actor, agent_id)
        with self._sessions.begin() as session:
            conn = session.connection()
            self._writer.remove(conn, agent.pk)
            self._audit(conn, actor, "agent.delete", agent_id, {"cardUrl": agent.card_url, "name": agent.name})

    # -- internals ------------------------------------------------------------------------

    def _record(
        self, card: object, raw: bytes | None, card_url: str, *, source: str, scope: KeyScope | None,
        fetched: FetchedCard | None = None, enforce: bool = True,
    ) -> CardRecord:
        if raw is None:
            raw = jsontext.dumps(card)
        if len(raw) > self._limits.max_card_bytes:
            raise PayloadTooLarge(
                f"the card is {len(raw)} bytes; the limit is {self._limits.max_card_bytes}",
                {"limit": self._limits.max_card_bytes},
            )
        report = validate_card(card, limits=self._limits, raw_size=len(raw))
        if not report.valid:
            raise InvalidCard(
                f"the Agent Card has {len(report.errors)} error(s); nothing was stored",
                {"issues": [issue.to_dict() for issue in report.issues], "protocolVersion": report.protocol_version},
            )
        assert isinstance(card, dict)  # a valid card is always an object
        record = CardRecord(
            card=card, raw=raw, card_url=card_url, source=source, report=report,
            summary=summarize_card(card), fetched_at=self._clock(),
        )
        if fetched is not None:
            record = dataclasses.replace(
                record, fetched_from=fetched.card_url, etag=fetched.etag,
                last_modified=fetched.last_modified, fetched_at=fetched.fetched_at,
            )
        return self._verified(record, scope, enforce=enforce)

    def _verified(self, record: CardRecord, scope: KeyScope | None, *, enforce: bool) -> CardRecord:
        """Issue 4: every card version is verified, and endorsed if it validated, before the
        transaction that stores it (JWKS fetches are network I/O)."""
        if self._trust is None or scope is None:
            return record
        trust = self._trust.assess(record, scope, endorse=record.report.valid)
        if enforce:
            self._trust.require(trust)
        return dataclasses.replace(record, trust=trust)

    def _new_scope(self, actor: Actor, jwks_url: str | None) -> KeyScope | None:
        return self._trust.new_scope(actor, jwks_url) if self._trust else None

    def _scope_of(self, agent: Agent) -> KeyScope | None:
        return self._trust.scope_of(agent) if self._trust else None

    def _record_from_fetch(self, fetched: FetchedCard, card_url: str, scope: KeyScope | None, *,
                           enforce: bool = True) -> CardRecord:
        return self._record(fetched.card, fetched.body, card_url, source="crawled", scope=scope, fetched=fetched,
                            enforce=enforce)

    def reassess_current(self, agent_pk: int) -> tuple[int, CardTrust] | None:
        """The current card verified again (a re-crawl answered 304: the card is the same, its keys
        may not be): (version, trust), or None without verification or agent."""
        return self._trust.assess_current(agent_pk) if self._trust else None

    def crawled_record(self, fetched: FetchedCard, card_url: str) -> CardRecord:
        """A re-fetched card as a record, valid or not: the crawler keeps invalid cards as history.

        Raises PayloadTooLarge.
        """
        scope = self._trust.scope_of_url(card_url) if self._trust else None
        try:
            return self._record_from_fetch(fetched, card_url, scope, enforce=False)
        except InvalidCard:
            assert isinstance(fetched.card, dict)  # the fetcher only returns JSON objects
            report = validate_card(fetched.card, limits=self._limits, raw_size=len(fetched.body))
            record = CardRecord(
                card=fetched.card, raw=fetched.body, card_url=card_url, source="crawled", report=report,
                summary=summarize_card(fetched.card), fetched_at=fetched.fetched_at,
                fetched_from=fetched.card_url, etag=fetched.etag, last_modified=fetched.last_modified,
            )
            return self._verified(record, scope, enforce=False)

    def store_crawled(self, conn: Connection, agent_pk: int, record: CardRecord) -> str:
        """Store a re-crawled card in the caller's transaction: "changed" (now current),
        "unchanged", or "invalid" (kept as a non-current version with its issues, so the last
        valid card stays current; so is a card without the valid signature the operator requires)."""
        if record.accepted:
            if self._write_version(conn, None, agent_pk, record, "card.recrawl"):
                return "changed"
            refresh_current_trust(conn, agent_pk, record.trust)  # e.g. its JWKS answers again
            return "unchanged"
        latest = conn.scalar(
            select(AgentCard.sha256).where(AgentCard.agent_pk == agent_pk).order_by(AgentCard.version.desc()).limit(1)
        )
        if latest == record.sha256:
            return "unchanged"
        version = _next_version(conn, agent_pk)
        self._writer.insert_card(conn, record, agent_pk, version, current=False)
        agent_id = conn.scalar(select(Agent.id).where(Agent.pk == agent_pk))
        self._audit(conn, None, "card.recrawl.invalid", agent_id, {"version": version})
        return "invalid"

    def _import_scope(self, actor: Actor, item: Any, shared: KeyScope | None) -> KeyScope | None:
        """The item's own scope when it names the agent's JWKS, else the one shared by the import.
        Raises InvalidRequest for an item that is not {"card", "cardUrl", "jwksUrl"?}."""
        if not isinstance(item, dict) or not isinstance(item.get("card"), dict):
            raise InvalidRequest('each item needs {"card": {...}, "cardUrl": "..."}')
        unknown = sorted(set(item) - IMPORT_ITEM_FIELDS)
        if unknown:
            raise InvalidRequest(f"unknown fields {unknown}; an item has {sorted(IMPORT_ITEM_FIELDS)}")
        jwks_url = item.get("jwksUrl")
        if jwks_url is None:
            return shared
        if not isinstance(jwks_url, str):
            raise InvalidRequest("jwksUrl must be a string (the agent's JWKS URL)")
        return self._new_scope(actor, jwks_url)

    def _import_record(self, item: dict[str, Any], scope: KeyScope | None) -> CardRecord:
        return self._record(item["card"], None, canonical_card_url(item.get("cardUrl", "")), source="pushed", scope=scope)

    def _new_agent_columns(self, actor: Actor, record: CardRecord, scope: KeyScope | None = None) -> dict[str, Any]:
        now = self._clock()
        return {
            **agent_values(record), "id": self._new_id(), "owner_id": actor.principal_id, "status": "active",
            "status_message": None, "card_version": 1, "created_at": now, "updated_at": now,
            "jwks_url": scope.jwks_url if scope else None, **NEW_AGENT_HEALTH,
        }

    def _insert_one(self, actor: Actor, record: CardRecord, scope: KeyScope | None = None) -> AgentSnapshot:
        columns = self._new_agent_columns(actor, record, scope)
        # Rows prepared here, so that the writer (SQLite has one) holds the database only to write them.
        audit = AUDIT_INSERT.prepare(self._engine.dialect, [
            self._audit_row(actor, "agent.register", columns["id"], {"cardUrl": record.card_url})])
        try:
            self._committer.submit((self._writer.prepare(record, columns), audit[0]))
        except IntegrityError:
            self._refuse_known_url(record.card_url)
            raise
        return AgentSnapshot.of(columns)

    def _write_registrations(self, batch: list[tuple[NewAgent, Any]]) -> None:
        new, audit = [new for new, _ in batch], [audit for _, audit in batch]
        # One statement is whole by itself: no BEGIN and COMMIT round trips.
        connection = self._autocommit.connect() if self._writer.one_statement(new) else self._engine.begin()
        with connection as conn:
            self._writer.insert_agents(conn, new, audit=audit)

    def _insert_batch(self, actor: Actor, batch: list[tuple[int, CardRecord]],
                      scopes: dict[int, KeyScope | None]) -> list[ImportOutcome]:
        """Insert the batch in one transaction; on a duplicate URL fall back to one by one."""
        fresh = self._without_known_urls(batch)
        outcomes = [ImportOutcome(i, error=_conflict(url, agent_id)) for i, url, agent_id in fresh.known]
        if not fresh.new:
            return outcomes
        extras = [self._new_agent_columns(actor, r, scopes[i]) for i, r in fresh.new]
        prepared = [self._writer.prepare(r, e) for (_, r), e in zip(fresh.new, extras)]
        audit = AUDIT_INSERT.prepare(self._engine.dialect, [self._audit_row(actor, "agent.import", None, {"count": len(extras)})])
        try:
            with writer_lock(self._engine).hold(), self._engine.begin() as conn:
                self._writer.insert_agents(conn, prepared, audit=audit)
        except IntegrityError:  # a duplicate inside the batch, or a race with another writer
            return outcomes + [self._insert_one_outcome(actor, i, r, scopes[i]) for i, r in fresh.new]
        return outcomes + [ImportOutcome(i, agent_id=e["id"]) for (i, _), e in zip(fresh.new, extras)]

    def _insert_one_outcome(self, actor: Actor, index: int, record: CardRecord, scope: KeyScope | None) -> ImportOutcome:
        try:
            return ImportOutcome(index, agent_id=self._insert_one(actor, record, scope).agent.id)
        except Conflict as error:
            return ImportOutcome(index, error=_error_dict(error))

    def _without_known_urls(self, batch: list[tuple[int, CardRecord]]) -> _Partition:
        urls = [record.card_url for _, record in batch]
        with self._sessions() as session:
            known = {row.card_url: row.id for row in session.execute(select(Agent.card_url, Agent.id).where(Agent.card_url.in_(urls)))}
        return _Partition(
            new=[(i, r) for i, r in batch if r.card_url not in known],
            known=[(i, r.card_url, known[r.card_url]) for i, r in batch if r.card_url in known],
        )

    def _new_version(self, actor: Actor, agent_pk: int, record: CardRecord, action: str) -> bool:
        with self._sessions.begin() as session:
            return self._write_version(session.connection(), actor, agent_pk, record, action)

    def _write_version(self, conn: Connection, actor: Actor | None, agent_pk: int, record: CardRecord, action: str) -> bool:
        self._writer.lock_agent(conn, agent_pk)
        current = conn.execute(
            select(Agent.card_sha256, Agent.card_version, Agent.id, Agent.status).where(Agent.pk == agent_pk)
        ).one()
        if current.card_sha256 == record.sha256:
            return False
        version = _next_version(conn, agent_pk)  # after any invalid re-crawled version too
        conn.execute(update(AgentCard).where(AgentCard.agent_pk == agent_pk).values(is_current=False))
        self._writer.insert_card(conn, record, agent_pk, version)
        values = self._writer.reindex(conn, agent_pk, record, current.status)
        conn.execute(
            update(Agent).where(Agent.pk == agent_pk)
            .values(**values, card_version=version, updated_at=self._clock())
        )
        self._audit(conn, actor, action, current.id, {"version": version})
        return True

    def _owned(self, actor: Actor, agent_id: str) -> Agent:
        with self._sessions() as session:
            agent = session.scalar(select(Agent).where(Agent.id == agent_id))
        if agent is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        if not actor.is_admin and agent.owner_id != actor.principal_id:
            raise Forbidden("only the agent's owner or an admin may change it")
        return agent

    def _refuse_known_url(self, card_url: str) -> None:
        with self._sessions() as session:
            existing = session.scalar(select(Agent.id).where(Agent.card_url == card_url))
        if existing is not None:
            raise Conflict(f"{card_url} is already registered as agent {existing}", {"agentId": existing})

    def _audit(self, conn: Connection, actor: Actor | None, action: str, agent_id: str | None, detail: dict[str, Any]) -> None:
        AUDIT_INSERT.execute_many(conn, [self._audit_row(actor, action, agent_id, detail)])

    def _audit_row(self, actor: Actor | None, action: str, agent_id: str | None, detail: dict[str, Any]) -> dict[str, Any]:
        # actor None: the registry itself (the re-crawler)
        return {"at": self._clock(), "principal_id": actor.principal_id if actor else None, "action": action,
                "agent_id": agent_id, "detail": detail}


@dataclasses.dataclass
class _Partition:
    new: list[tuple[int, CardRecord]]
    known: list[tuple[int, str, str]]


def _next_version(conn: Connection, agent_pk: int) -> int:
    return int(conn.scalar(select(func.max(AgentCard.version)).where(AgentCard.agent_pk == agent_pk)) or 0) + 1


def _conflict(url: str, agent_id: str) -> dict[str, Any]:
    return _error_dict(Conflict(f"{url} is already registered as agent {agent_id}", {"agentId": agent_id}))


def _error_dict(error: Exception) -> dict[str, Any]:
    code = getattr(error, "code", "error")
    return {"code": code, "message": str(error), "details": getattr(error, "details", {})}
