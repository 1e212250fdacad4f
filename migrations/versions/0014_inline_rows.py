"""PostgreSQL: an agent's row stays in one piece, and raw cards are compressed with LZ4.

PostgreSQL shrinks a row over ~2 KB until it fits in 2 KB: it compresses its largest values one
by one, then moves the largest out of line into the table's TOAST relation. A bench agent's row
is ~4 KB before that (its profile, the card summarised, is ~2.8 KB), so every registration
compressed the profile (LZ4, migration 0009), then the description and the JSON columns with
pglz, and still stored the profile out of line: 8,561 of 11,000 bench agents had a TOAST row,
with its own index entry, read back by every search page that shows the agent. A raw card over
2 KB (most of them) was compressed with pglz as well. In an import of 10,000 cards, pglz took 7%
of PostgreSQL's CPU (perf).

Now `agents` shrinks its rows only down to 3 KB (`toast_tuple_target`): compressing the profile
is enough, no other column is tried and nothing moves out of line (at 20,000 bench agents: no
TOAST row, the largest row 3,068 bytes). Raw cards are compressed with LZ4 where the server has
it. Measured with imports of 10,000 cards into 10,000 (two interleaved rounds each), PostgreSQL
used 0.324–0.329 ms of CPU a card with these settings against 0.347–0.371 without. Rows written
before keep their form until written again; the upgrade rewrites nothing. SQLite is unchanged.

Revision ID: 0014_inline_rows
Revises: 0013_payload_statistics
Create Date: 2026-11-23 06:45:00
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "0014_inline_rows"
down_revision = "0013_payload_statistics"
branch_labels = None
depends_on = None

_LZ4_AVAILABLE = text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
ROW_TARGET = 3072  # bytes


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        return
    op.execute(f"ALTER TABLE agents SET (toast_tuple_target = {ROW_TARGET})")
    if bind.scalar(_LZ4_AVAILABLE):
        op.execute("ALTER TABLE agent_cards ALTER COLUMN raw SET COMPRESSION lz4")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("ALTER TABLE agents RESET (toast_tuple_target)")
    op.execute("ALTER TABLE agent_cards ALTER COLUMN raw SET COMPRESSION DEFAULT")
