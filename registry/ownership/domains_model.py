"""The `domains` table: a principal's claim on a domain, the challenge it must meet, and the
state of its proof (proven, re-checked, lapsed)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

PENDING = "pending"  # added, not proven yet (or proven once and removed by a re-add)
VERIFIED = "verified"  # proven and still holding
LAPSED = "lapsed"  # was proven; the proof disappeared, or another account proved the domain since
STATUSES = (PENDING, VERIFIED, LAPSED)


class Domain(Base):
    """One row per (domain, principal): several accounts may try to prove the same domain, and at
    most one holds it (`uq_domains_verified_name`); the latest proof takes it over."""

    __tablename__ = "domains"
    __table_args__ = (
        UniqueConstraint("name", "owner_id"),
        Index(
            "uq_domains_verified_name",
            "name",
            unique=True,
            sqlite_where=text("status = 'verified'"),
            postgresql_where=text("status = 'verified'"),
        ),
        Index("ix_domains_next_check_at", "next_check_at"),
    )

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(300))  # normalised: lower case, IDNA, maybe `host:port`
    owner_id: Mapped[int] = mapped_column(ForeignKey("principals.id", ondelete="CASCADE"), index=True)
    include_subdomains: Mapped[bool] = mapped_column(Boolean)
    challenge_id: Mapped[str] = mapped_column(String(64))  # the last segment of the HTTP challenge path
    challenge_value: Mapped[str] = mapped_column(String(100))  # what both challenges must show
    status: Mapped[str] = mapped_column(String(20))
    status_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    method: Mapped[str | None] = mapped_column(String(10), nullable=True)  # http | dns: what proved it
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    verified_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    checked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    lapsed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Re-checks of a proven domain: when the next is due, failures in a row, and the worker's lease.
    next_check_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    check_failures: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    check_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    check_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
