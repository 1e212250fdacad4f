"""The audit log table of revision 0001_baseline. Part of that revision, kept apart only for
length; imports nothing from the application.

`principal_id` is who acted (null: the registry itself); `subject_principal_id` whom the entry is
about when that is someone else (the previous owner of a claimed agent or of a domain taken over
or lapsed), so that each can read the entries about them. Both are indexed for that reading."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

AUDIT_TABLES = ("audit_log",)


def create_audit_table() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("principal_id", sa.Integer(), nullable=True),
        sa.Column("subject_principal_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(50), nullable=False),
        sa.Column("agent_id", sa.String(40), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    for column in ("agent_id", "at", "principal_id", "subject_principal_id"):
        op.create_index(f"ix_audit_log_{column}", "audit_log", [column])
