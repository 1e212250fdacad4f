"""The push relay's tables. `relay_messages` is the outbox and the delivery job's leased queue at
once: a message is pending until delivered or dead-lettered, due only while it heads its task."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

AUTH_MODES = ("token", "jwt")
# push: an agent pushes to the relay URL; events: the registry writes its change events (`registry.events`).
KINDS = ("push", "events")
MESSAGE_STATES = ("pending", "delivered", "dead")
MAX_TASK_ID = 200
_PENDING = text("state = 'pending'")
_PENDING_ONLY: dict[str, Any] = {"postgresql_where": _PENDING, "sqlite_where": _PENDING}


class RelaySubscription(Base):
    """A client's relay endpoint for one agent (optionally one task) and its real webhook: the relay
    token stored as SHA-256 only, the client's webhook credentials encrypted (`secret_box`)."""

    __tablename__ = "relay_subscriptions"

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("principals.id", ondelete="CASCADE"), index=True)
    # The agent may leave the catalog while notifications are still in flight: keep its id.
    agent_pk: Mapped[int | None] = mapped_column(ForeignKey("agents.pk", ondelete="SET NULL"), index=True)
    agent_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str | None] = mapped_column(String(MAX_TASK_ID), nullable=True)
    target_url: Mapped[str] = mapped_column(String(2048))
    target_secrets: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    auth_mode: Mapped[str] = mapped_column(String(10))
    token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    previous_token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    previous_token_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str] = mapped_column(String(10), server_default=text("'push'"))
    status_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())


class RelayMessage(Base):
    """One accepted notification, its body verbatim, and where its delivery stands."""

    __tablename__ = "relay_messages"
    __table_args__ = (
        UniqueConstraint("subscription_pk", "task_key", "seq", name="uq_relay_messages_order"),
        # The agent's JWT ids: a second message with the same `jti` is a replay (unique; NULLs differ).
        UniqueConstraint("subscription_pk", "jti", name="uq_relay_messages_jti"),
        # Each task's pending messages in order: "anything earlier pending?" and "the head?" are one probe.
        Index("ix_relay_messages_pending_task", "subscription_pk", "task_key", "seq", **_PENDING_ONLY),
        Index("ix_relay_messages_listing", "subscription_pk", "pk"),
    )

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    subscription_pk: Mapped[int] = mapped_column(ForeignKey("relay_subscriptions.pk", ondelete="CASCADE"))
    task_key: Mapped[str] = mapped_column(String(MAX_TASK_ID))  # the task id, "" for a message without one
    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))  # PostgreSQL: from one sequence
    kind: Mapped[str] = mapped_column(String(20))
    body: Mapped[bytes] = mapped_column(LargeBinary)
    jti: Mapped[str | None] = mapped_column(String(200), nullable=True)
    received_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
    state: Mapped[str] = mapped_column(String(10))
    due_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True, index=True)
    # The back-off a failed message still owes while it waits behind an earlier one (`task_order`).
    not_before: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer)
    last_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    replays: Mapped[int] = mapped_column(Integer)


class RelayAttempt(Base):
    """One POST of a message to its target (or the failure before an answer)."""

    __tablename__ = "relay_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_pk: Mapped[int] = mapped_column(ForeignKey("relay_messages.pk", ondelete="CASCADE"), index=True)
    attempt: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    outcome: Mapped[str] = mapped_column(String(20))
    http_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    response: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
