"""How a validated card becomes rows: the agent's denormalised fields and rendered profile, its
search terms and its full-text document (kept by `text_index`). Written with Core statements
because registration is a hot path."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.engine import Dialect

from registry import jsontext
from registry.db import DriverInsert, DriverStatement
from registry.schema import Agent, AgentCard, AgentTerm, AuditEntry
from registry.catalog.new_agents_pg import new_agents_statement
from registry.catalog.tag_counts import TagCounts
from registry.catalog.text_index import TextIndex, search_document
from registry.trust.rows import CHECK_INSERT, ENDORSEMENT_INSERT, SIGNATURE_TERM, write_trust
from registry.trust.state import CardTrust
from registry.validation import CardSummary, ValidationReport

_SPACES = re.compile(r"\s+")
ACTIVE = "active"  # the status under which an agent's tags are counted


@dataclasses.dataclass(frozen=True)
class CardRecord:
    """A validated card on its way into the catalog, with where and when it came from."""

    card: dict[str, Any]
    raw: bytes
    card_url: str
    source: str
    report: ValidationReport
    summary: CardSummary
    fetched_at: dt.datetime
    fetched_from: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    trust: CardTrust | None = None  # its signature checks and endorsement (issue 4)

    @property
    def accepted(self) -> bool:
        """Valid, and signed as the operator requires."""
        return self.report.valid and (self.trust is None or self.trust.accepted)

    @property
    def sha256(self) -> str:
        # Not functools.cached_property: on Python 3.11 it holds one lock for every instance, so
        # concurrent registrations queued behind each other's JSON encoding.
        cached = self.__dict__.get("_sha256")
        if cached is None:
            cached = self._content_sha256()
            object.__setattr__(self, "_sha256", cached)
        return cached

    def _content_sha256(self) -> str:
        """Identity of the card's content, independent of key order and white space.

        Sorted-key compact JSON (`jsontext.canonical`) is canonical enough for change detection;
        full RFC 8785 is reserved for signing, where byte-exactness across implementations
        matters (and costs ~10x more in pure Python).
        """
        return hashlib.sha256(jsontext.canonical(self.card)).hexdigest()


# Catalogs reuse a small vocabulary of tags and media types; a registration normalises ~30 of them.
@functools.lru_cache(maxsize=8192)
def normalize_tag(tag: str) -> str:
    """Tags match case-insensitively and ignore surrounding and repeated white space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", tag)).strip().casefold()


@functools.lru_cache(maxsize=1024)
def normalize_mode(mode: str) -> str:
    return mode.strip().lower()


def protocol_terms(versions: list[str]) -> set[str]:
    """Each version is findable by itself and by major.minor ("0.3.0" also as "0.3")."""
    terms = set()
    for version in versions:
        terms.add(version)
        parts = version.split(".")
        if len(parts) >= 2:
            terms.add(".".join(parts[:2]))
    return terms


def agent_values(record: CardRecord) -> dict[str, Any]:
    """The agent columns that follow the current card."""
    summary = record.summary
    values = {
        "card_url": record.card_url,
        "source": record.source,
        "name": summary.name[:500],
        "description": summary.description,
        "version": summary.version,
        "provider_org": summary.provider_org,
        "provider_url": summary.provider_url,
        "documentation_url": summary.documentation_url,
        "icon_url": summary.icon_url,
        "protocol_versions": list(summary.protocol_versions),
        "flavor": record.report.flavor or "unknown",
        "interfaces": [
            {"url": url, "protocolBinding": binding, "protocolVersion": version}
            for url, binding, version in summary.interfaces
        ],
        "capabilities": dict(summary.capabilities),
        "input_modes": _all_modes(summary, "input"),
        "output_modes": _all_modes(summary, "output"),
        "tags": sorted({normalize_tag(t) for s in summary.skills for t in s.tags} - {""}),
        "card_sha256": record.sha256,
        **(record.trust.agent_columns() if record.trust else {}),
    }
    values["profile"] = profile_json(summary, values)
    return values


def card_values(record: CardRecord, agent_pk: int, version: int) -> dict[str, Any]:
    return {
        "agent_pk": agent_pk,
        "version": version,
        "source": record.source,
        "fetched_from": record.fetched_from,
        "raw": record.raw,
        "sha256": record.sha256,
        "protocol_version": record.report.protocol_version,
        "flavor": record.report.flavor,
        "valid": record.report.valid,
        "issues": [issue.to_dict() for issue in record.report.issues],
        "is_current": True,
        "fetched_at": record.fetched_at,
        "etag": record.etag,
        "last_modified": record.last_modified,
    }


def _all_modes(summary: CardSummary, direction: str) -> list[str]:
    defaults = summary.default_input_modes if direction == "input" else summary.default_output_modes
    modes = {normalize_mode(m) for m in defaults}
    for skill in summary.skills:
        modes.update(normalize_mode(m) for m in (skill.input_modes if direction == "input" else skill.output_modes))
    return sorted(m for m in modes if m)


def skill_json(skill: Any) -> dict[str, Any]:
    return {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
        "examples": list(skill.examples),
        "inputModes": list(skill.input_modes),
        "outputModes": list(skill.output_modes),
    }


def profile_json(summary: CardSummary, values: dict[str, Any]) -> str:
    """The card-derived fields of the agent as the API shows them, as JSON text."""
    provider = None
    if summary.provider_org or summary.provider_url:
        provider = {"organization": summary.provider_org, "url": summary.provider_url}
    return jsontext.dumps_text({
        "name": values["name"],
        "description": summary.description,
        "version": summary.version,
        "provider": provider,
        "documentationUrl": summary.documentation_url,
        "iconUrl": summary.icon_url,
        "protocolVersions": values["protocol_versions"],
        "interfaces": values["interfaces"],
        "capabilities": values["capabilities"],
        "defaultInputModes": values["input_modes"],
        "defaultOutputModes": values["output_modes"],
        "skills": [skill_json(skill) for skill in summary.skills],
        "tags": values["tags"],
    })


MAX_TERM = 500
# PostgreSQL: new agents per INSERT statement. A statement's memory is the backend's to allocate
# and free: at 1,000 agents a statement, an import of 10,000 cost PostgreSQL 11.3 page faults a
# card (16% of its CPU under `perf`, mostly zeroing fresh pages); at 250, with the pool handing out
# its most recently used connection, 2.6–4.0, and its CPU a card went from 0.250–0.261 ms to
# 0.223–0.228 (bench/catalog.py's import after 10,000 registrations, three interleaved runs).
STATEMENT_AGENTS = 250


def term_rows(agent_pk: int, values: dict[str, Any], summary: CardSummary) -> list[tuple[int, str, str]]:
    """(agent pk, kind, value) rows of agent_terms."""
    terms: set[tuple[str, str]] = {("tag", tag) for tag in values["tags"]}
    terms.update(("skill", skill.id) for skill in summary.skills)
    terms.update(("input", mode) for mode in values["input_modes"])
    terms.update(("output", mode) for mode in values["output_modes"])
    terms.update(("cap", name) for name, on in values["capabilities"].items() if on)
    terms.update(("proto", v) for v in protocol_terms(values["protocol_versions"]))
    terms.add(("status", values["status"]))
    if "signature_state" in values:
        terms.add((SIGNATURE_TERM, values["signature_state"]))
    # Values are indexed by their first MAX_TERM characters; two that share them are one row.
    return [(agent_pk, kind, value) for kind, value in sorted({(kind, value[:MAX_TERM]) for kind, value in terms})]


@functools.lru_cache(maxsize=8)
def agent_insert(columns: tuple[str, ...]) -> DriverStatement:
    """The INSERT of a new agent giving these columns (a registration without verification gives
    no signature columns)."""
    return DriverStatement(insert(Agent), columns)


# The rows of a version and of its checks go straight to the driver (see DriverStatement): they
# are written once per registration.
CARD_INSERT = DriverStatement(insert(AgentCard), (
    "agent_pk", "version", "source", "fetched_from", "raw", "sha256", "protocol_version", "flavor", "valid", "issues",
    "is_current", "fetched_at", "etag", "last_modified",
))
AUDIT_INSERT = DriverStatement(insert(AuditEntry), ("at", "principal_id", "action", "agent_id", "detail"))


@dataclasses.dataclass(frozen=True)
class NewAgent:
    """The rows of a new agent as the driver takes them, all but its key (`CatalogWriter.prepare`)."""

    insert: DriverStatement
    agent: Any
    card: Any
    checks: list[Any]
    endorsements: list[Any]
    terms: list[tuple[str, str]]  # (kind, value)
    document: str  # as the text index stores it (`TextIndex.value`)
    counted_tags: list[str]  # the tags counted for it: all of them when it is active


class CatalogWriter:
    """Writes and rewrites the rows behind an agent inside the caller's transaction.

    Statements are built once: registration is the hot path, and SQLAlchemy caches compiled
    forms per statement object.
    """

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self.text_index = TextIndex(dialect.name)
        self.tag_counts = TagCounts(dialect.name)
        self._terms = DriverInsert(dialect.name, "agent_terms", {"agent_pk": "integer", "kind": "text", "value": "text"})
        self._card_key = CARD_INSERT.with_value(dialect, "agent_pk")
        self._check_key = CHECK_INSERT.with_value(dialect, "agent_pk")
        self._endorsement_key = ENDORSEMENT_INSERT.with_value(dialect, "agent_pk")

    def prepare(self, record: CardRecord, columns: dict[str, Any]) -> NewAgent:
        """A new agent's rows from its record and full agent columns, ready for `insert_agents`.
        Everything but the key the database assigns is done here, outside any write lock: on
        SQLite concurrent registrations queue for the one writer, for as long as it holds the lock."""
        statement, trust = agent_insert(tuple(columns)), record.trust
        terms = [(kind, value) for _, kind, value in term_rows(0, columns, record.summary)]
        return NewAgent(
            insert=statement,
            agent=statement.prepare(self._dialect, [columns])[0],
            card=CARD_INSERT.prepare(self._dialect, [card_values(record, 0, 1)])[0],
            checks=CHECK_INSERT.prepare(self._dialect, trust.check_rows(0, 1)) if trust else [],
            endorsements=ENDORSEMENT_INSERT.prepare(self._dialect, trust.endorsement_rows(0, 1)) if trust else [],
            terms=terms,
            document=self.text_index.value(search_document(record.summary)),
            counted_tags=[value for kind, value in terms if kind == "tag"] if columns["status"] == ACTIVE else [],
        )

    def insert_agents(self, conn: Connection, batch: list[NewAgent], audit: Sequence[Any] = ()) -> list[int]:
        """Insert prepared agents and prepared `AUDIT_INSERT` rows; return the agents' pks in order."""
        if not self.text_index.sqlite:
            return self._insert_agents_in_statements(conn, batch, audit)
        keys: dict[int, int] = {}
        for mine in _by_columns(batch):
            keys.update(zip(mine, batch[mine[0]].insert.insert_keys(conn, [batch[i].agent for i in mine])))
        pks = [keys[i] for i in range(len(batch))]
        CARD_INSERT.run(conn, [self._card_key(new.card, pk) for new, pk in zip(batch, pks)])
        checks = [self._check_key(row, pk) for new, pk in zip(batch, pks) for row in new.checks]
        if checks:
            CHECK_INSERT.run(conn, checks)
        endorsements = [self._endorsement_key(row, pk) for new, pk in zip(batch, pks) for row in new.endorsements]
        if endorsements:
            ENDORSEMENT_INSERT.run(conn, endorsements)
        self._terms.run(conn, [(pk, kind, value) for new, pk in zip(batch, pks) for kind, value in new.terms])
        self.text_index.write(conn, [(pk, new.document) for new, pk in zip(batch, pks)])
        self.tag_counts.change(conn, added=[tag for new in batch for tag in new.counted_tags])
        if audit:
            AUDIT_INSERT.run(conn, list(audit))
        return pks

    def one_statement(self, batch: list[NewAgent]) -> bool:
        """Whether `insert_agents` writes `batch` in one statement (PostgreSQL, one column set, at
        most `STATEMENT_AGENTS`)."""
        return not self.text_index.sqlite and len(batch) <= STATEMENT_AGENTS and len(_by_columns(batch)) == 1

    @staticmethod
    def _insert_agents_in_statements(conn: Connection, batch: list[NewAgent], audit: Sequence[Any]) -> list[int]:
        """PostgreSQL: each group of agents giving the same columns in statements of up to
        `STATEMENT_AGENTS` (`new_agents_pg`)."""
        keys: dict[int, int] = {}
        statements = [mine[k:k + STATEMENT_AGENTS] for mine in _by_columns(batch) for k in range(0, len(mine), STATEMENT_AGENTS)]
        for position, mine in enumerate(statements):
            items = [batch[i] for i in mine]
            checks = [(n, row) for n, new in enumerate(items, 1) for row in new.checks]
            endorsements = [(n, row) for n, new in enumerate(items, 1) for row in new.endorsements]
            logged = list(audit) if position == 0 else []
            write = new_agents_statement(
                items[0].insert.columns, CARD_INSERT.columns, CHECK_INSERT.columns if checks else None,
                ENDORSEMENT_INSERT.columns if endorsements else None, AUDIT_INSERT.columns if logged else None,
            )
            keys.update(zip(mine, write.run(
                conn, agents=[new.agent for new in items], cards=[new.card for new in items], checks=checks,
                endorsements=endorsements, terms=[(n, kind, value) for n, new in enumerate(items, 1) for kind, value in new.terms],
                vectors=[new.document for new in items], deltas=TagCounts.net(tag for new in items for tag in new.counted_tags),
                audit=logged,
            )))
        return [keys[i] for i in range(len(batch))]

    @staticmethod
    def insert_card(conn: Connection, record: CardRecord, agent_pk: int, version: int, *, current: bool = True) -> None:
        """One more version of an agent's card, with its signature checks and endorsement."""
        CARD_INSERT.execute_many(conn, [{**card_values(record, agent_pk, version), "is_current": current}])
        write_trust(conn, [(record.trust, agent_pk, version)])

    def reindex(self, conn: Connection, agent_pk: int, record: CardRecord, status: str) -> dict[str, Any]:
        """Replace the terms and text of an agent with those of its new card. The caller holds the
        agent (`lock_agent`): the tags it had are read here and must not change meanwhile."""
        old_tags = self.tag_counts.agent_tags(conn, agent_pk)
        conn.execute(delete(AgentTerm).where(AgentTerm.agent_pk == agent_pk))
        self.text_index.remove(conn, agent_pk)
        values = agent_values(record)
        terms = self._index(conn, [(agent_pk, record.summary, {**values, "status": status})])
        if status == ACTIVE:
            new_tags = {value for _, kind, value in terms if kind == "tag"}
            self.tag_counts.change(conn, added=new_tags - old_tags, removed=old_tags - new_tags)
        return values

    def set_status(self, conn: Connection, agent_pk: int, status: str) -> None:
        """Set the status term. The caller holds the agent (it updated the agent's row first)."""
        was = _status_term(conn, agent_pk)
        conn.execute(
            update(AgentTerm).where(AgentTerm.agent_pk == agent_pk, AgentTerm.kind == "status").values(value=status)
        )
        if (was == ACTIVE) != (status == ACTIVE):
            tags = self.tag_counts.agent_tags(conn, agent_pk)
            self.tag_counts.change(conn, added=tags if status == ACTIVE else (), removed=() if status == ACTIVE else tags)

    @staticmethod
    def lock_agent(conn: Connection, agent_pk: int) -> None:
        """Hold the agent against other writers until the transaction ends, before reading what is
        about to change (its status and tags): a change committed meanwhile is then seen, not
        overwritten or counted twice. PostgreSQL locks the row. SQLite has no row locks, and the
        driver opens the transaction only at the first write: a write that changes nothing takes
        the database's write lock."""
        if conn.dialect.name == "sqlite":
            conn.execute(update(Agent).where(Agent.pk == agent_pk).values(status=Agent.status))
        else:
            conn.execute(select(Agent.pk).where(Agent.pk == agent_pk).with_for_update())

    def remove(self, conn: Connection, agent_pk: int) -> None:
        self.lock_agent(conn, agent_pk)
        was = _status_term(conn, agent_pk)
        if was == ACTIVE:
            self.tag_counts.change(conn, removed=self.tag_counts.agent_tags(conn, agent_pk))
        self.text_index.remove(conn, agent_pk)
        conn.execute(delete(AgentTerm).where(AgentTerm.agent_pk == agent_pk))  # no cascade: migration 0012
        conn.execute(delete(Agent).where(Agent.pk == agent_pk))

    def _index(self, conn: Connection, items: list[tuple[int, CardSummary, dict[str, Any]]]) -> list[tuple[int, str, str]]:
        """Write the terms and documents of agents; return the term rows written."""
        terms = [row for pk, summary, values in items for row in term_rows(pk, values, summary)]
        self._terms.run(conn, terms)
        self.text_index.write(conn, [(pk, self.text_index.value(search_document(s))) for pk, s, _ in items])
        return terms


def _by_columns(batch: list[NewAgent]) -> list[list[int]]:
    """Positions in `batch` of the agents giving the same columns, group by group: one group unless
    some registrations were verified and others not (signature columns)."""
    groups: dict[DriverStatement, list[int]] = {}
    for i, new in enumerate(batch):
        groups.setdefault(new.insert, []).append(i)
    return list(groups.values())


def _status_term(conn: Connection, agent_pk: int) -> str | None:
    """The status the agent's terms hold (what its tags are counted under)."""
    return conn.scalar(select(AgentTerm.value).where(AgentTerm.agent_pk == agent_pk, AgentTerm.kind == "status"))
