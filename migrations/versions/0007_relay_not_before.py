"""A message that waits behind an earlier one of its task keeps its retry back-off.

A replay can make a message that already failed an attempt wait again behind an earlier one of
its task (`due_at` NULL). `not_before` keeps the time its back-off (or the target's
`Retry-After`) said while it waits; when it becomes its task's head again it is due at the later
of that time and now (`registry.relay.task_order`). No existing row needs a value: before this
revision a waiting message's back-off was simply lost.

Revision ID: 0007_relay_not_before
Revises: 0006_relay_heads
Create Date: 2026-11-23 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import registry.db.types

revision = "0007_relay_not_before"
down_revision = "0006_relay_heads"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column: SQLite's ALTER TABLE ADD COLUMN suffices, the queue table is not rebuilt.
    op.add_column("relay_messages", sa.Column("not_before", registry.db.types.UtcDateTime(timezone=True),
                                              nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("relay_messages", schema=None) as batch_op:
        batch_op.drop_column("not_before")
