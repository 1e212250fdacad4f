"""Registering, replacing and removing agents. Fetch, validate and verify first, then hand the
rows to the store, which writes each change in one transaction: nothing half-written stays."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection

from registry import jsontext
from registry.auth import Actor
from registry.catalog.card_urls import canonical_card_url
from registry.catalog.errors import InvalidCard
from registry.catalog.fetcher import CardFetcher, FetchedCard, NotModified
from registry.catalog.gate import ACTIVE, DELETE, STATUS, UNLISTED, VERSION, OpenGate, RegistrationGate
from registry.catalog.imports import BulkImports, url_taken
from registry.catalog.models import Agent
from registry.catalog.records import CardRecord, agent_values
from registry.catalog.store import CatalogStore, NewAgent
from registry.db.group_commit import GroupCommitter
from registry.db.types import utcnow
from registry.errors import AmbiguousId, BadRequest, Conflict, InvalidRequest, NotFound, PayloadTooLarge
from registry.trust import CardTrust, CatalogTrust, KeyScope, refresh_current_trust
from registry.validation import CardLimits, summarize_card, validate_card

STATUSES = ("active", "deprecated")
ID_LENGTH = len(str(uuid.UUID(int=0)))  # agent ids are UUIDs (`new_id`)
MIN_ID_PREFIX = 8  # shorter prefixes would name many agents in a large catalog
CANDIDATES_SHOWN = 5  # of an ambiguous prefix
# What a just-registered agent shows before its first probe (the columns' server defaults).
NEW_AGENT_HEALTH = {
    "health_state": "unknown",
    "health_checked_at": None,
    "health_latency_ms": None,
    "health_reason": None,
    "health_uptime24h": None,
}
# The signature columns of an agent whose card was not verified (verification off); a verified
# card's roll-up replaces them (`CardTrust.agent_columns`).
UNVERIFIED = {"signature_state": "unverifiable", "signature_kids": None, "signature_checked_at": None}


@dataclasses.dataclass(frozen=True)
class AgentSnapshot:
    """An agent as just written, shaped like the rows the API presents (saves a read-back)."""

    agent: SimpleNamespace

    @classmethod
    def of(cls, columns: dict[str, Any]) -> AgentSnapshot:
        return cls(SimpleNamespace(**columns))


class CatalogService(BulkImports):
    def __init__(
        self,
        store: CatalogStore,
        fetcher: CardFetcher,
        limits: CardLimits,
        trust: CatalogTrust,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        gate: RegistrationGate | None = None,
    ) -> None:
        """`trust` verifies and endorses every card version (`registry.trust.NoTrust` when off);
        `gate` decides who may register and change what (`OpenGate`: the registrant owns it)."""
        self._store = store
        self._fetcher = fetcher
        self._limits = limits
        self._trust = trust
        self._clock = clock
        self._new_id = new_id
        self._gate: RegistrationGate = gate or OpenGate()
        # Registrations that arrive together are written in one transaction (`GroupCommitter`).
        self._committer: GroupCommitter[NewAgent] = GroupCommitter(
            self._write_registrations,
            lambda new: self._write_registrations([new]),
            serialize=store.writing,
        )

    # -- registration ---------------------------------------------------------------------

    def register_from_url(self, actor: Actor, url: str, jwks_url: str | None = None) -> AgentSnapshot:
        """Discover, fetch, validate, verify and store an agent. Returns it as stored.

        Raises InvalidRequest, Conflict, InvalidCard, SignatureRequired and the fetcher's errors.
        """
        self._refuse_known_url(canonical_card_url(url))
        scope = self._trust.new_scope(actor, jwks_url)
        fetched = self._fetcher.discover(url)
        with self._committer.expecting():
            record = self._record_from_fetch(fetched, canonical_card_url(fetched.card_url), scope)
            return self._insert_one(actor, record, scope)

    def register_card(
        self, actor: Actor, card: object, card_url: str, raw: bytes | None = None, jwks_url: str | None = None
    ) -> AgentSnapshot:
        """Store an uploaded card (source `pushed`). Raises InvalidRequest, Conflict, InvalidCard,
        SignatureRequired."""
        with self._committer.expecting():
            scope = self._trust.new_scope(actor, jwks_url)
            record = self._record(card, raw, canonical_card_url(card_url), source="pushed", scope=scope)
            return self._insert_one(actor, record, scope)

    # -- naming an agent ------------------------------------------------------------------

    def resolve_id(self, text: str) -> str:
        """The id of the agent that `text` names: a whole id as it is (the caller's own look-up
        answers for it, a 404 included, at no extra cost), or the one id that starts with `text`.
        Raises BadRequest (shorter than MIN_ID_PREFIX), AmbiguousId, NotFound."""
        if len(text) >= ID_LENGTH:
            return text
        if len(text) < MIN_ID_PREFIX:
            raise BadRequest(
                f"{text!r} is too short to name an agent: give its id, or at least {MIN_ID_PREFIX} characters of it"
            )
        prefix = text.lower()  # UUIDs are case-insensitive; ours are minted in lower case
        matches = self._store.ids_with_prefix(prefix, CANDIDATES_SHOWN + 1)
        if not matches:
            raise NotFound(f"no agent with id {text!r}, nor one whose id starts with it")
        if len(matches) > 1 and matches[0] != prefix:  # an id equal to the text wins over longer ones
            shown = ", ".join(matches[:CANDIDATES_SHOWN]) + (", ..." if len(matches) > CANDIDATES_SHOWN else "")
            raise AmbiguousId(
                f"{text!r} starts the ids of several agents ({shown}); give more characters",
                {"candidates": matches[:CANDIDATES_SHOWN]},
            )
        return matches[0]

    # -- changes to an existing agent -----------------------------------------------------

    def replace_card(self, actor: Actor, agent_id: str, card: object, raw: bytes | None = None) -> bool:
        """Store a pushed card as the agent's new version. Returns False when nothing changed."""
        agent = self._changing(actor, agent_id, VERSION)
        record = self._record(card, raw, agent.card_url, source="pushed", scope=self._trust.scope_of(agent))
        return self._new_version(actor, agent, record, "card.replace")

    def refresh(self, actor: Actor, agent_id: str) -> bool:
        """Re-fetch the agent's card now. Returns False when the card did not change."""
        agent = self._changing(actor, agent_id, VERSION)
        fetched = self._fetcher.fetch(agent.card_url)
        if isinstance(fetched, NotModified):
            return False
        record = self._record_from_fetch(fetched, agent.card_url, self._trust.scope_of(agent))
        return self._new_version(actor, agent, record, "card.refresh")

    def update_status(self, actor: Actor, agent_id: str, status: str | None, message: str | None) -> None:
        """Set `active`/`deprecated` and a status message. Raises InvalidRequest, NotFound, Forbidden,
        Conflict (an entry in review: approving it is the reviewer's)."""
        if status is not None and status not in STATUSES:
            raise InvalidRequest(f"status must be one of {list(STATUSES)}, not {status!r}")
        agent = self._changing(actor, agent_id, STATUS)
        if agent.status in UNLISTED:
            raise Conflict(
                f"agent {agent_id} is {agent.status} in review: an admin or the proven owner of its domain "
                f"approves it (POST /v1/agents/{agent_id}/approve)",
                {"status": agent.status},
            )
        changes: dict[str, Any] = {"updated_at": self._clock()}
        if status is not None:
            changes["status"] = status
        if message is not None:
            changes["status_message"] = message or None
        self._store.set_status(
            agent.pk, changes, self._audit(actor, "agent.status", agent_id, {"status": status, "message": message})
        )

    def delete(self, actor: Actor, agent_id: str) -> None:
        """Remove the agent, its history and index rows; the audit log keeps the fact."""
        agent = self._changing(actor, agent_id, DELETE)
        self._store.remove(
            agent.pk, self._audit(actor, "agent.delete", agent_id, {"cardUrl": agent.card_url, "name": agent.name})
        )

    def admit_manifest(self, actor: Actor, domain_url: str) -> None:
        """Raises Forbidden when `actor` may not register what the domain's ARD manifest lists."""
        actor.require_domain_of(domain_url)
        self._gate.admit_manifest(actor, domain_url)

    def shows(self, actor: Actor | None, agent_id: str) -> bool:
        """Whether `actor` may read the agent when it is unlisted (pending or rejected in review)."""
        agent = self._store.agent(agent_id)
        return agent is not None and self._gate.may_see(actor, agent)

    def fold_tag_counts(self) -> int:
        """Fold the tag counts' pending changes (the `tag-counts` job)."""
        return self._store.fold_tag_counts()

    # -- re-crawls (the health domain's crawler) --------------------------------------------

    def reassess_current(self, agent_pk: int) -> tuple[int, CardTrust] | None:
        """The current card verified again (a re-crawl answered 304: the card is the same, its keys
        may not be): (version, trust), or None without verification or agent."""
        return self._trust.assess_current(agent_pk)

    def crawled_record(self, fetched: FetchedCard, card_url: str) -> CardRecord:
        """A re-fetched card as a record, valid or not: the crawler keeps invalid cards as history.
        Raises PayloadTooLarge."""
        return self._record_from_fetch(fetched, card_url, self._trust.scope_of_url(card_url), enforce=False)

    def store_crawled(self, conn: Connection, agent_pk: int, record: CardRecord) -> str:
        """Store a re-crawled card in the caller's transaction: "changed" (now current),
        "unchanged", or "invalid" (kept as a non-current version with its issues, so the last
        valid card stays current; so is a card without the valid signature the operator requires)."""
        if record.accepted:  # the store fills in the agent's id
            audit = self._audit(None, "card.recrawl", None, {})
            if self._store.write_version(conn, agent_pk, record, self._clock(), audit):
                return "changed"
            refresh_current_trust(conn, agent_pk, record.trust)  # e.g. its JWKS answers again
            return "unchanged"
        audit = self._audit(None, "card.recrawl.invalid", None, {})
        return "invalid" if self._store.write_rejected_version(conn, agent_pk, record, audit) else "unchanged"

    # -- internals ------------------------------------------------------------------------

    def _record(
        self,
        card: object,
        raw: bytes | None,
        card_url: str,
        *,
        source: str,
        scope: KeyScope | None,
        fetched: FetchedCard | None = None,
        enforce: bool = True,
    ) -> CardRecord:
        """The card validated and verified. `enforce`: an invalid card raises InvalidCard and one
        without the signature the operator requires SignatureRequired; else they are kept as such."""
        raw = jsontext.dumps(card) if raw is None else raw
        limit = self._limits.max_card_bytes
        if len(raw) > limit:
            raise PayloadTooLarge(f"the card is {len(raw)} bytes; the limit is {limit}", {"limit": limit})
        report = validate_card(card, limits=self._limits, raw_size=len(raw))
        if enforce and not report.valid:
            raise InvalidCard(
                f"the Agent Card has {len(report.errors)} error(s); nothing was stored",
                {"issues": [issue.to_dict() for issue in report.issues], "protocolVersion": report.protocol_version},
            )
        assert isinstance(card, dict)  # a valid card is an object, and the fetcher returns only objects
        record = CardRecord(card, raw, card_url, source, report, summarize_card(card), self._clock())
        if fetched is not None:
            record = dataclasses.replace(
                record,
                fetched_from=fetched.card_url,
                etag=fetched.etag,
                last_modified=fetched.last_modified,
                fetched_at=fetched.fetched_at,
            )
        return self._verified(record, scope, enforce=enforce)

    def _verified(self, record: CardRecord, scope: KeyScope | None, *, enforce: bool) -> CardRecord:
        """Every card version is verified, and endorsed if it validated, before the transaction
        that stores it (JWKS fetches are network I/O). No scope: verification is off."""
        if scope is None:
            return record
        trust = self._trust.assess(record, scope, endorse=record.report.valid)
        if trust is None:
            return record
        if enforce:
            self._trust.require(trust)
        return dataclasses.replace(record, trust=trust)

    def _record_from_fetch(
        self, fetched: FetchedCard, card_url: str, scope: KeyScope | None, *, enforce: bool = True
    ) -> CardRecord:
        return self._record(
            fetched.card, fetched.body, card_url, source="crawled", scope=scope, fetched=fetched, enforce=enforce
        )

    def _new_agent(self, actor: Actor, record: CardRecord, scope: KeyScope | None) -> NewAgent:
        """The agent's rows, if the actor's token and the gate admit it (raises Forbidden), in the
        status the gate says."""
        actor.require_domain_of(record.card_url)
        status = self._gate.admit(actor, record)
        return NewAgent(record, self._new_agent_columns(actor, record, scope, status))

    def _new_agent_columns(
        self, actor: Actor, record: CardRecord, scope: KeyScope | None, status: str = ACTIVE
    ) -> dict[str, Any]:
        now = self._clock()
        return {
            **UNVERIFIED,
            **agent_values(record),
            "id": self._new_id(),
            "owner_id": actor.principal_id,
            "status": status,
            "status_message": None,
            "card_version": 1,
            "created_at": now,
            "updated_at": now,
            "jwks_url": scope.jwks_url if scope else None,
            **NEW_AGENT_HEALTH,
        }

    def _insert_one(self, actor: Actor, record: CardRecord, scope: KeyScope | None) -> AgentSnapshot:
        new = self._new_agent(actor, record, scope)
        columns = new.columns
        new.audit = self._audit(actor, "agent.register", columns["id"], {"cardUrl": record.card_url})
        self._committer.submit(new)
        if new.pk is None:
            self._refuse_known_url(record.card_url)
            raise Conflict(f"{record.card_url} was registered by another request at the same time")
        return AgentSnapshot.of({**columns, "pk": new.pk})

    def _write_registrations(self, batch: list[NewAgent]) -> None:
        for new, pk in zip(batch, self._store.insert_new(batch)):
            new.pk = pk

    def _new_version(self, actor: Actor, agent: Agent, record: CardRecord, action: str) -> bool:
        self._gate.admit_version(actor, agent, record)
        audit = self._audit(actor, action, agent.id, {})
        return self._store.replace_version(agent.pk, record, self._clock(), audit) is not None

    def _changing(self, actor: Actor, agent_id: str, change: str) -> Agent:
        """The agent, if the gate lets `actor` make `change` to it. Raises NotFound, Forbidden."""
        agent = self._store.agent(agent_id)
        if agent is None:
            raise NotFound(f"no agent with id {agent_id!r}")
        actor.require_domain_of(agent.card_url)  # a token narrowed to domains acts within them only
        self._gate.admit_change(actor, agent, change)
        return agent

    def _refuse_known_url(self, card_url: str) -> None:
        existing = self._store.known_urls([card_url]).get(card_url)
        if existing is not None:
            raise url_taken(card_url, existing)

    def _audit(self, actor: Actor | None, action: str, agent_id: str | None, detail: dict[str, Any]) -> dict[str, Any]:
        # actor None: the registry itself (the re-crawler)
        return {
            "at": self._clock(),
            "principal_id": actor.principal_id if actor else None,
            "action": action,
            "agent_id": agent_id,
            "detail": detail,
        }
