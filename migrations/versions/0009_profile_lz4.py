"""Agent profiles are compressed with LZ4 on PostgreSQL, so a search page reads them faster.

Every search result carries the agent's profile (its card, summarised: ~3 KB of JSON for an agent
with five skills), which PostgreSQL stores compressed, with pglz unless told otherwise. LZ4 unpacks
faster. Measured on the bench machine with the page query of a two-tag search (51 rows, 10,000
agents), the two databases queried in turn so that both saw the same host speed: reading the
profiles added 1.2 ms to the query with pglz and 0.9 ms with LZ4, and the whole query took 5.61 ms
against 5.33 ms (median). A small gain, for one line of DDL. Profiles stored before this
migration keep pglz until they are written again; nothing is rewritten here, so the upgrade is
instant at any size. A server built without LZ4 keeps pglz. SQLite does not compress and is
unchanged.

Revision ID: 0009_profile_lz4
Revises: 0008_search_statistics
Create Date: 2026-11-22 20:45:00
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "0009_profile_lz4"
down_revision = "0008_search_statistics"
branch_labels = None
depends_on = None

_LZ4_AVAILABLE = text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite" or not bind.scalar(_LZ4_AVAILABLE):
        return
    op.execute("ALTER TABLE agents ALTER COLUMN profile SET COMPRESSION lz4")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("ALTER TABLE agents ALTER COLUMN profile SET COMPRESSION DEFAULT")
