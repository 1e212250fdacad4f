"""Health and re-crawl: per-agent probe and crawl schedule, leases, health roll-up; health_checks.

Revision ID: 0002_health
Revises: 0001
Create Date: 2026-11-22 00:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import registry.db.types

revision = "0002_health"
down_revision = "0001"
branch_labels = None
depends_on = None

EPOCH = sa.text("'1970-01-01 00:00:00'")


def _when(name: str, *, nullable: bool = True, default: sa.TextClause | None = None) -> sa.Column:
    return sa.Column(name, registry.db.types.UtcDateTime(timezone=True), nullable=nullable, server_default=default)


def _agent_columns() -> list[sa.Column]:
    return [
        _when("next_probe_at", nullable=False, default=EPOCH),
        sa.Column("probe_lease_owner", sa.String(length=100), nullable=True),
        _when("probe_lease_until"),
        sa.Column("health_state", sa.String(length=10), nullable=False, server_default=sa.text("'unknown'")),
        _when("health_since"),
        _when("health_checked_at"),
        sa.Column("health_latency_ms", sa.Integer(), nullable=True),
        sa.Column("health_reason", sa.String(length=40), nullable=True),
        sa.Column("health_successes", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("health_failures", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("health_uptime24h", sa.Float(), nullable=True),
        sa.Column("health_window", sa.JSON(), nullable=True),
        _when("next_crawl_at", nullable=False, default=EPOCH),
        sa.Column("crawl_lease_owner", sa.String(length=100), nullable=True),
        _when("crawl_lease_until"),
        _when("crawled_at"),
        sa.Column("crawl_failures", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("crawl_error", sa.String(length=500), nullable=True),
        sa.Column("crawl_etag", sa.String(length=500), nullable=True),
        sa.Column("crawl_last_modified", sa.String(length=100), nullable=True),
    ]


def upgrade() -> None:
    # Adding columns only: SQLite's ALTER TABLE ADD COLUMN suffices, the table is not rebuilt.
    with op.batch_alter_table("agents", schema=None) as batch_op:
        for column in _agent_columns():
            batch_op.add_column(column)
        batch_op.create_index(batch_op.f("ix_agents_next_probe_at"), ["next_probe_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_agents_next_crawl_at"), ["next_crawl_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_agents_health_state"), ["health_state"], unique=False)

    op.create_table(
        "health_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_pk", sa.Integer(), nullable=False),
        _when("checked_at", nullable=False),
        sa.Column("interface_url", sa.String(length=2048), nullable=False),
        sa.Column("protocol_version", sa.String(length=20), nullable=True),
        sa.Column("method", sa.String(length=20), nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.String(length=40), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("rpc_code", sa.Integer(), nullable=True),
        sa.Column("detail", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(["agent_pk"], ["agents.pk"], name=op.f("fk_health_checks_agent_pk_agents"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_health_checks")),
    )
    with op.batch_alter_table("health_checks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_health_checks_checked_at"), ["checked_at"], unique=False)
        batch_op.create_index("ix_health_checks_agent_recent", ["agent_pk", "checked_at"], unique=False)


def downgrade() -> None:
    op.drop_table("health_checks")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agents_health_state"))
        batch_op.drop_index(batch_op.f("ix_agents_next_crawl_at"))
        batch_op.drop_index(batch_op.f("ix_agents_next_probe_at"))
        for column in reversed(_agent_columns()):
            batch_op.drop_column(column.name)
