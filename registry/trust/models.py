"""Trust: what the registry found out about each card's signatures, the keys it may verify them
with, and its own signing keys.

- `signature_checks`: one row per signature of each stored card version (A2A §8.4.3): kid, alg,
  where the key came from, the outcome, which canonical form matched and what it leaves uncovered.
- `card_endorsements`: the registry's own signature over a card version, made when it was stored.
- `trusted_keys`: JWKS documents an owner registered (`POST /v1/keys`), for all of the owner's
  agents or one of them.
- `registry_keys`: the registry's signing keys; the private half sealed with a key derived from
  `AGENTDEX_SECRET_KEY`, or kept in a key file the row names.
- The roll-up (`signature_state`, kids, time) and the agent's own `jwks_url` live on `agents`
  (`registry.catalog.models.AgentTrustColumns`), so listing and search need no join.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, ForeignKey, ForeignKeyConstraint, Index, Integer, LargeBinary, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

SIGNATURE_STATES = ("verified", "invalid", "unverifiable", "unsigned")


def _card_version_fk(table: str) -> ForeignKeyConstraint:
    return ForeignKeyConstraint(
        ["agent_pk", "card_version"], ["agent_cards.agent_pk", "agent_cards.version"],
        name=f"fk_{table}_card_version_agent_cards", ondelete="CASCADE",
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
    """A JWKS an owner registered: keys that may verify the cards of all its agents, or of one."""

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
        Index("uq_registry_keys_active_alg", "alg", unique=True,
              sqlite_where=text("status = 'active'"), postgresql_where=text("status = 'active'")),
    )

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    kid: Mapped[str] = mapped_column(String(200), unique=True)
    alg: Mapped[str] = mapped_column(String(10))
    public_jwk: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Exactly one of these holds the private key: sealed bytes, or the path of a PEM file.
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    key_file: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    retired_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Retired keys stay in the published JWKS until then (the grace period).
    not_after: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
