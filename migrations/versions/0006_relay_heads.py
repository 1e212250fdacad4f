"""Only the head of each task's queue is due: a message waiting behind an earlier one of its task
keeps `due_at` NULL (`registry.relay.task_order`), so the delivery claim is a plain index range.

Existing pending messages that wait behind an earlier pending one stop being due; the earliest
keeps its `due_at`. On PostgreSQL, new messages take their place in a task's order from one
sequence (`relay_message_order`), so web processes accepting notifications of one task at once
never take the same number; it starts above every number already given. A statement trigger
notifies the channel delivery workers LISTEN on (`agentdex_relay`) whenever messages are inserted,
in the inserting transaction, instead of a `pg_notify` statement of the ingress's own.

`relay_messages` is a queue: every message is updated three or four times (leased, recorded, made
due) and each update of an indexed column leaves a dead index entry that claims must step over
until a vacuum removes it. Autovacuum's defaults wait for 20% of the table to change; the queue is
vacuumed and analyzed after a fixed number of changes instead, and its pages keep room for
updates that stay on the page.

Revision ID: 0006_relay_heads
Revises: 0004_relay
Create Date: 2026-11-22 05:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_relay_heads"
down_revision = "0004_relay"
branch_labels = None
depends_on = None


PENDING = "state = 'pending'"


def upgrade() -> None:
    # Exact probes for a task's pending messages, however long its delivered history.
    op.create_index("ix_relay_messages_pending_task", "relay_messages", ["subscription_pk", "task_key", "seq"],
                    postgresql_where=sa.text(PENDING), sqlite_where=sa.text(PENDING))
    op.drop_index("ix_relay_messages_pending_order", table_name="relay_messages")
    op.execute(
        "UPDATE relay_messages SET due_at = NULL WHERE state = 'pending' AND EXISTS ("
        "SELECT 1 FROM relay_messages AS earlier WHERE earlier.subscription_pk = relay_messages.subscription_pk "
        "AND earlier.task_key = relay_messages.task_key AND earlier.state = 'pending' "
        "AND earlier.seq < relay_messages.seq)"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE relay_messages ALTER COLUMN seq TYPE bigint")  # one sequence for every task
        op.execute("CREATE SEQUENCE relay_message_order")
        op.execute("SELECT setval('relay_message_order', COALESCE(MAX(seq), 0) + 1, false) FROM relay_messages")
        op.execute(
            "CREATE FUNCTION agentdex_relay_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN PERFORM pg_notify('agentdex_relay', ''); RETURN NULL; END $$"
        )
        op.execute(
            "ALTER TABLE relay_messages SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0, "
            "autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0, "
            "autovacuum_analyze_threshold = 5000)"
        )
        op.execute(
            "CREATE TRIGGER relay_messages_notify AFTER INSERT ON relay_messages "
            "FOR EACH STATEMENT EXECUTE FUNCTION agentdex_relay_notify()"
        )


def downgrade() -> None:
    op.create_index("ix_relay_messages_pending_order", "relay_messages", ["subscription_pk", "task_key", "state", "seq"])
    op.drop_index("ix_relay_messages_pending_task", table_name="relay_messages")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER relay_messages_notify ON relay_messages")
        op.execute("ALTER TABLE relay_messages RESET (fillfactor, autovacuum_vacuum_scale_factor, "
                   "autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)")
        op.execute("DROP FUNCTION agentdex_relay_notify()")
        op.execute("DROP SEQUENCE relay_message_order")
        op.execute("ALTER TABLE relay_messages ALTER COLUMN seq TYPE integer")
    # Before this revision every pending message was due and the claim skipped non-heads itself.
    op.execute("UPDATE relay_messages SET due_at = received_at WHERE state = 'pending' AND due_at IS NULL")
