"""PostgreSQL: an agent's values and its raw card are compressed with LZ4, not pglz.

PostgreSQL shrinks a row over ~2 KB until it fits in 2 KB: it compresses its largest values one
by one, then moves the largest out of line. A bench agent's row is ~4 KB before that (its profile,
the card summarised, is ~2.8 KB): every registration compressed the profile (LZ4 since migration
0009), then the description and the JSON columns with pglz, before the profile went out of line.
A raw card over 2 KB, most of them, was compressed with pglz as well. In an import of 10,000 cards
into 10,000, compression took 7.9% of PostgreSQL's CPU samples (perf: `pglz_compress` 7.0%); with
these columns on LZ4, 3.0% (`pglz_compress` 0.2%).

Keeping the rows whole instead (`toast_tuple_target` 3 KB: no value out of line, no other column
tried) saved as much in imports, but doubled the table (52 MB against 24 MB at 20,000 bench
agents), and tag queries spent ~0.2 ms more in the database (four interleaved rounds). Values
written before keep pglz until written again; nothing is rewritten here. SQLite is unchanged.

Revision ID: 0014_lz4_payload
Revises: 0013_payload_statistics
Create Date: 2026-11-23 06:45:00
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "0014_lz4_payload"
down_revision = "0013_payload_statistics"
branch_labels = None
depends_on = None

_LZ4_AVAILABLE = text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
# The agent's values PostgreSQL may compress, largest first after the profile (LZ4 since 0009).
AGENT_COLUMNS = ("description", "interfaces", "tags", "name", "capabilities", "input_modes", "output_modes",
                 "protocol_versions", "signature_kids", "health_window")


def _set(method: str) -> None:
    op.execute("ALTER TABLE agents " + ", ".join(f"ALTER COLUMN {c} SET COMPRESSION {method}" for c in AGENT_COLUMNS))
    op.execute(f"ALTER TABLE agent_cards ALTER COLUMN raw SET COMPRESSION {method}")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql" and bind.scalar(_LZ4_AVAILABLE):
        _set("lz4")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _set("DEFAULT")
