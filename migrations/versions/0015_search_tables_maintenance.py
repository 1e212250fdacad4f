"""PostgreSQL: autovacuum leaves the search tables' analyses and insert-driven vacuums to the
`catalog-statistics` job, unless they change by twice their size.

The job analyzes and vacuums `agents`, `agent_terms` and `agent_search` once a bulk write is over
(`registry.catalog.planner_statistics`). Autovacuum did the same work whenever its launcher came
round (every minute), in the middle of an import too: an import of 10,000 cards into 10,000 agents
passes its thresholds (an analysis after changes of a tenth of a table, a vacuum after inserts of
a fifth) within its first 2,000 cards. Then it competed with the import for the same two cores,
and `agent_terms` is the costliest table to analyze (statistics target 1,000, migration 0008). In 9
imports of 10,000 cards into 10,000 registrations, autovacuum came twice: PostgreSQL spent 0.379
and 0.386 ms of CPU a card, against 0.238–0.301 in the other seven. With autovacuum's launcher
waking every 2 s, so that it came during every import, 4 interleaved runs imported 2,119–3,033
cards/s without these settings and 3,134–3,346 with them.

Autovacuum still vacuums dead rows (health probes update `agents` all day; deletes) and prevents
wraparound as before; a table that changed by twice its size is analyzed and vacuumed by it too,
as a backstop for a deployment that runs no worker. SQLite is unchanged.

Revision ID: 0015_search_tables_maintenance
Revises: 0014_lz4_payload
Create Date: 2026-11-23 22:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0015_search_tables_maintenance"
down_revision = "0014_lz4_payload"
branch_labels = None
depends_on = None

# The tables `catalog-statistics` maintains (registry.catalog.planner_statistics.SEARCH_TABLES).
SEARCH_TABLES = ("agents", "agent_terms", "agent_search")


def _options() -> tuple[str, ...]:
    """The settings this server knows (insert-driven vacuums came with PostgreSQL 13)."""
    version = op.get_bind().dialect.server_version_info or ()
    return ("autovacuum_analyze_scale_factor",) + (("autovacuum_vacuum_insert_scale_factor",) if version >= (13,) else ())


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in SEARCH_TABLES:
            op.execute(f"ALTER TABLE {table} SET (" + ", ".join(f"{option} = 2" for option in _options()) + ")")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in SEARCH_TABLES:
            op.execute(f"ALTER TABLE {table} RESET ({', '.join(_options())})")
