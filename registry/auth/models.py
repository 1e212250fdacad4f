"""Principals and their API tokens (stored as SHA-256, shown once; optionally expiring and
narrowed to domains)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from registry.db import Base
from registry.db.types import UtcDateTime


class Principal(Base):
    __tablename__ = "principals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())

    tokens: Mapped[list[ApiToken]] = relationship(back_populates="principal")


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    principal_id: Mapped[int] = mapped_column(ForeignKey("principals.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    scopes: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Kept to the minute: written on the first use in each minute, not on every request.
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Space-separated hosts the token may act on (`example.com`, `127.0.0.1:8443`); None: anywhere.
    domains: Mapped[str | None] = mapped_column(String(2000), nullable=True)

    principal: Mapped[Principal] = relationship(back_populates="tokens")
