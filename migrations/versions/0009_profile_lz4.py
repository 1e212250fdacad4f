"""Agent profiles are compressed with LZ4 on PostgreSQL, so a search page reads them faster.

Every search result carries the agent's profile (its card, summarised: ~3 KB of JSON for an agent
with five skills), which PostgreSQL stores compressed. With its default pglz, unpacking the 51
profiles of a page took ~1.7 ms of the database's CPU on the bench machine, as much as finding the
page; with LZ4 it takes ~0.3 ms (roundtrip of a 51-row page with profiles, 10,000 agents: 5.3–5.6
ms against 3.6–4.0 ms). Profiles stored before this migration keep pglz until they are written
again; nothing is rewritten here, so the upgrade is instant at any size. A server built without
LZ4 keeps pglz. SQLite does not compress and is unchanged.

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
