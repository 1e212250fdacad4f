"""Trust's tables, and the catalog's tables as trust names them: trust sits below the catalog, so
it names them by table name with only the columns it uses (a test checks them against the
catalog's models). The roll-up and an agent's `jwks_url` live on `agents`, so search needs no join.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    column,
    table,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

SIGNATURE_STATES = ("verified", "invalid", "unverifiable", "unsigned")
_ACTIVE_ONLY = text("status = 'active'")


def iso(value: dt.datetime | None) -> str | None:
    """A time as the API shows it (RFC 3339, UTC, `Z`)."""
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value else None


AGENTS = table(
    "agents",
    column("pk", Integer),
    column("id", String),
    column("owner_id", Integer),
    column("card_url", String),
    column("card_version", Integer),
    column("jwks_url", String),
    column("updated_at", UtcDateTime()),
    column("signature_state", String),
    column("signature_kids", JSON),
    column("signature_checked_at", UtcDateTime()),
)
AGENT_CARDS = table(
    "agent_cards",
    column("agent_pk", Integer),
    column("version", Integer),
    column("raw", LargeBinary),
    column("valid", Boolean),
    column("is_current", Boolean),
    column("source", String),
    column("fetched_from", String),
    column("fetched_at", UtcDateTime()),
)
AGENT_TERMS = table("agent_terms", column("agent_pk", Integer), column("kind", String), column("value", String))


def _card_version_fk(name: str) -> ForeignKeyConstraint:
    return ForeignKeyConstraint(
        ["agent_pk", "card_version"],
        ["agent_cards.agent_pk", "agent_cards.version"],
        name=f"fk_{name}_card_version_agent_cards",
        ondelete="CASCADE",
    )


class SignatureCheck(Base):
    """The outcome of one signature (`position` in the card's `signatures`) of one card version."""

    __tablename__ = "signature_checks"
    __table_args__ = (_card_version_fk("signature_checks"),)

    agent_pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    outcome: Mapped[str] = mapped_column(String(20))
    kid: Mapped[str | None] = mapped_column(String(500), nullable=True)
    alg: Mapped[str | None] = mapped_column(String(20), nullable=True)
    key_source: Mapped[str | None] = mapped_column(String(2100), nullable=True)
    key_thumbprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    form: Mapped[str | None] = mapped_column(String(10), nullable=True)
    uncovered: Mapped[list[str]] = mapped_column(JSON)
    detail: Mapped[str] = mapped_column(Text)
    checked_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())


class CardEndorsement(Base):
    """The registry's detached JWS over one card version (`{protected, signature, header}`)."""

    __tablename__ = "card_endorsements"
    __table_args__ = (_card_version_fk("card_endorsements"),)

    agent_pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    kid: Mapped[str] = mapped_column(String(200))
    jku: Mapped[str] = mapped_column(String(2048))
    entry: Mapped[dict[str, Any]] = mapped_column(JSON)
    signed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())


class TrustedKey(Base):
    """A JWKS an owner registered (`POST /v1/keys`): it may verify the cards of all its agents, or of one."""

    __tablename__ = "trusted_keys"

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    principal_id: Mapped[int] = mapped_column(ForeignKey("principals.id", ondelete="CASCADE"), index=True)
    agent_pk: Mapped[int | None] = mapped_column(ForeignKey("agents.pk", ondelete="CASCADE"), nullable=True, index=True)
    jwks: Mapped[dict[str, Any]] = mapped_column(JSON)
    kids: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())


class RegistryKey(Base):
    """One of the registry's own signing keys. At most one active key per algorithm."""

    __tablename__ = "registry_keys"
    __table_args__ = (
        Index(
            "uq_registry_keys_active_alg", "alg", unique=True, sqlite_where=_ACTIVE_ONLY, postgresql_where=_ACTIVE_ONLY
        ),
    )

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    kid: Mapped[str] = mapped_column(String(200), unique=True)
    alg: Mapped[str] = mapped_column(String(10))
    public_jwk: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Exactly one of these holds the private key: sealed with AGENTDEX_SECRET_KEY, or a PEM file's path.
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    key_file: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    retired_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Retired keys stay in the published JWKS until then (the grace period).
    not_after: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
