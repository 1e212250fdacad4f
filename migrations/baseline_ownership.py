"""The ownership tables of revision 0001_baseline (issue 33): proven domains. Part of that
revision, kept apart only for length; imports nothing from the application."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

OWNERSHIP_TABLES = ("domains",)  # child tables first, for the downgrade

VERIFIED = sa.text("status = 'verified'")


def create_ownership_tables() -> None:
    _domains()


def _domains() -> None:
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "domains",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("include_subdomains", sa.Boolean(), nullable=False),
        sa.Column("challenge_id", sa.String(64), nullable=False),
        sa.Column("challenge_value", sa.String(100), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("status_reason", sa.String(500), nullable=True),
        sa.Column("method", sa.String(10), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("verified_at", utc, nullable=True),
        sa.Column("checked_at", utc, nullable=True),
        sa.Column("lapsed_at", utc, nullable=True),
        sa.Column("next_check_at", utc, nullable=True),
        sa.Column("check_failures", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("check_lease_owner", sa.String(100), nullable=True),
        sa.Column("check_lease_until", utc, nullable=True),
        sa.PrimaryKeyConstraint("pk", name="pk_domains"),
        sa.UniqueConstraint("name", "owner_id", name="uq_domains_name_owner_id"),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["principals.id"], name="fk_domains_owner_id_principals", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_domains_owner_id", "domains", ["owner_id"])
    op.create_index("ix_domains_next_check_at", "domains", ["next_check_at"])
    # At most one account holds a domain: a takeover and a concurrent proof cannot both win.
    op.create_index(
        "uq_domains_verified_name", "domains", ["name"], unique=True, sqlite_where=VERIFIED, postgresql_where=VERIFIED
    )
