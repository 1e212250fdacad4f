"""The catalog: agents, their immutable card history and the search terms.

`agent_terms` is the one index every structured filter uses: one row per (agent, kind, value)
for tags, modes, skill ids and protocol versions, so a query with N filters is N index
look-ups intersected by the database, whatever the filter.

`tag_counts` (with the not yet folded `tag_count_deltas`) answers "which tags, how many agents"
without counting the whole catalog.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

# New agents are due for a probe and a crawl at once: the epoch sorts before any clock, on every
# backend, and keeps the "due" predicate a plain index range (`next_probe_at <= now`).
EPOCH_DEFAULT = text("'1970-01-01 00:00:00'")


class AgentScheduleColumns:
    """Columns of `agents` that the worker jobs own (mixed into `Agent`)."""

    # -- health probe ---------------------------------------------------------------------
    next_probe_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), server_default=EPOCH_DEFAULT, index=True)
    probe_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    probe_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_state: Mapped[str] = mapped_column(String(10), server_default=text("'unknown'"), index=True)
    health_since: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_checked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    health_latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    health_reason: Mapped[str | None] = mapped_column(String(40), nullable=True)
    health_successes: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    health_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    health_uptime24h: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Hourly [hour, alive rounds, rounds] buckets of the last 24 hours: uptime without a scan.
    health_window: Mapped[list[list[int]] | None] = mapped_column(JSON, nullable=True)

    # -- re-crawl -------------------------------------------------------------------------
    next_crawl_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), server_default=EPOCH_DEFAULT, index=True)
    crawl_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    crawl_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawl_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    crawl_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    crawl_etag: Mapped[str | None] = mapped_column(String(500), nullable=True)
    crawl_last_modified: Mapped[str | None] = mapped_column(String(100), nullable=True)


class AgentTrustColumns:
    """Columns of `agents` that follow the current card's signature checks (mixed into `Agent`)."""

    # Rows that existed before verification was introduced were never checked: "unverifiable"
    # (no key was resolved) is the truthful state until they are checked.
    signature_state: Mapped[str] = mapped_column(String(12), server_default=text("'unverifiable'"))
    signature_kids: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    signature_checked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Owner-declared JWKS of this agent (key source 1 of the resolution policy).
    jwks_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)


class Agent(AgentScheduleColumns, AgentTrustColumns, Base):
    __tablename__ = "agents"

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    card_url: Mapped[str] = mapped_column(String(2048), unique=True)
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("principals.id", ondelete="SET NULL"), nullable=True, index=True
    )
    status: Mapped[str] = mapped_column(String(20), default="active")
    status_message: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    source: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(500))
    description: Mapped[str] = mapped_column(Text)
    version: Mapped[str | None] = mapped_column(String(200), nullable=True)
    provider_org: Mapped[str | None] = mapped_column(String(500), nullable=True)
    provider_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    documentation_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    icon_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    protocol_versions: Mapped[list[str]] = mapped_column(JSON)
    flavor: Mapped[str] = mapped_column(String(10))
    interfaces: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    capabilities: Mapped[dict[str, bool]] = mapped_column(JSON)
    input_modes: Mapped[list[str]] = mapped_column(JSON)
    output_modes: Mapped[list[str]] = mapped_column(JSON)
    tags: Mapped[list[str]] = mapped_column(JSON)
    card_sha256: Mapped[str] = mapped_column(String(64))
    card_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)

    # The card-derived part of the agent as the API shows it (JSON), rendered once at write time.
    profile: Mapped[str] = mapped_column(Text)


class AgentCard(Base):
    """One fetched or pushed card, verbatim. Never updated except for `is_current`."""

    __tablename__ = "agent_cards"
    __table_args__ = (UniqueConstraint("agent_pk", "version"),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_pk: Mapped[int] = mapped_column(ForeignKey("agents.pk", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(20))
    fetched_from: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    protocol_version: Mapped[str | None] = mapped_column(String(20), nullable=True)
    flavor: Mapped[str | None] = mapped_column(String(10), nullable=True)
    valid: Mapped[bool] = mapped_column(Boolean, default=True)
    issues: Mapped[list[dict[str, str]]] = mapped_column(JSON)
    is_current: Mapped[bool] = mapped_column(Boolean)
    fetched_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    etag: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_modified: Mapped[str | None] = mapped_column(String(100), nullable=True)


class AgentTerm(Base):
    """A normalised, searchable value of an agent's current card: kind is tag, skill, input, output,
    cap, proto, sig, status or host (the card URL's). Written and removed with the card by the store;
    no foreign key, whose check would cost every one of a registration's ~20 rows."""

    __tablename__ = "agent_terms"
    # On SQLite clustered on the primary key: stored twice, not three times.
    __table_args__ = (Index("ix_agent_terms_lookup", "kind", "value", "agent_pk"), {"sqlite_with_rowid": False})

    agent_pk: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)
    value: Mapped[str] = mapped_column(String(500), primary_key=True)


class AgentEmbedding(Base):
    """The semantic model's vector of an agent's current card, with the model that made it.

    `marker` orders the writes, so that each process's in-process vector index reads only what
    changed since it last looked (`registry.catalog.search_index`): on SQLite one more than the
    largest (writers take turns), on PostgreSQL the writing transaction's id (the server's default).
    """

    __tablename__ = "agent_embeddings"

    agent_pk: Mapped[int] = mapped_column(
        ForeignKey("agents.pk", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    model: Mapped[str] = mapped_column(String(100))
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    marker: Mapped[int] = mapped_column(BigInteger, index=True)


class TagCount(Base):
    """How many active agents carry a tag, as of the last fold of `tag_count_deltas`."""

    __tablename__ = "tag_counts"

    tag: Mapped[str] = mapped_column(String(500), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class TagCountDelta(Base):
    """A change to a tag's count, written in the transaction that changed the agent's tags or
    status; the `tag-counts` job folds them into `tag_counts`."""

    __tablename__ = "tag_count_deltas"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(500))
    delta: Mapped[int] = mapped_column(Integer)
