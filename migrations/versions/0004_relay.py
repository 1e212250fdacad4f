"""Push relay: relay_subscriptions, relay_messages (the outbox), relay_attempts.

Revision ID: 0004_relay
Revises: 0001
Create Date: 2026-11-22 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import registry.db.types

revision = "0004_relay"
down_revision = "0001"
branch_labels = None
depends_on = None


def _when(name: str, *, nullable: bool = True) -> sa.Column:
    return sa.Column(name, registry.db.types.UtcDateTime(timezone=True), nullable=nullable)


def _subscriptions() -> None:
    op.create_table(
        "relay_subscriptions",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("agent_pk", sa.Integer(), nullable=True),
        sa.Column("agent_id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=True),
        sa.Column("target_url", sa.String(length=2048), nullable=False),
        sa.Column("target_secrets", sa.LargeBinary(), nullable=True),
        sa.Column("auth_mode", sa.String(length=10), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.Column("previous_token_hash", sa.String(length=64), nullable=True),
        _when("previous_token_until"),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("status_reason", sa.String(length=500), nullable=True),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.ForeignKeyConstraint(["agent_pk"], ["agents.pk"], name=op.f("fk_relay_subscriptions_agent_pk_agents"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["owner_id"], ["principals.id"], name=op.f("fk_relay_subscriptions_owner_id_principals"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_relay_subscriptions")),
        sa.UniqueConstraint("id", name=op.f("uq_relay_subscriptions_id")),
    )
    with op.batch_alter_table("relay_subscriptions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_relay_subscriptions_agent_pk"), ["agent_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_relay_subscriptions_owner_id"), ["owner_id"], unique=False)


def _messages() -> None:
    op.create_table(
        "relay_messages",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("subscription_pk", sa.Integer(), nullable=False),
        sa.Column("task_key", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("jti", sa.String(length=200), nullable=True),
        _when("received_at", nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        _when("due_at"),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        _when("lease_until"),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _when("last_attempt_at"),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        _when("finished_at"),
        sa.Column("replays", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["subscription_pk"], ["relay_subscriptions.pk"],
                                name=op.f("fk_relay_messages_subscription_pk_relay_subscriptions"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_relay_messages")),
        sa.UniqueConstraint("id", name=op.f("uq_relay_messages_id")),
        sa.UniqueConstraint("subscription_pk", "task_key", "seq", name="uq_relay_messages_order"),
        sa.UniqueConstraint("subscription_pk", "jti", name="uq_relay_messages_jti"),
    )
    with op.batch_alter_table("relay_messages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_relay_messages_due_at"), ["due_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_relay_messages_received_at"), ["received_at"], unique=False)
        batch_op.create_index("ix_relay_messages_pending_order", ["subscription_pk", "task_key", "state", "seq"],
                              unique=False)
        batch_op.create_index("ix_relay_messages_listing", ["subscription_pk", "pk"], unique=False)


def _attempts() -> None:
    op.create_table(
        "relay_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_pk", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        _when("started_at", nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("response", sa.String(length=1000), nullable=True),
        _when("next_attempt_at"),
        sa.ForeignKeyConstraint(["message_pk"], ["relay_messages.pk"],
                                name=op.f("fk_relay_attempts_message_pk_relay_messages"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_relay_attempts")),
    )
    with op.batch_alter_table("relay_attempts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_relay_attempts_message_pk"), ["message_pk"], unique=False)


def upgrade() -> None:
    _subscriptions()
    _messages()
    _attempts()


def downgrade() -> None:
    op.drop_table("relay_attempts")
    op.drop_table("relay_messages")
    op.drop_table("relay_subscriptions")
