"""Planner statistics for search terms on PostgreSQL, so a tag search joins its terms the right way.

Search intersects the terms of a query (agent_terms (kind, value) ranges in agent order) and
leaves the join method to the planner, whose row estimates were off twentyfold: `value` had the
default 100 most-common values, among ~1,800 distinct tags, skill ids and modes at 100,000
agents, and the planner multiplied the selectivity of `kind = 'tag'` with that of `value` as if
they were independent, though a value decides its kind. A tag of 2,033 agents was estimated at
97, so the planner probed the other tag for every one of them (15 ms) instead of merging the two
ranges (4 ms). With these statistics the estimates follow the counts (1,854 for that tag, 243
for one of 269, 75 for a long tail of 73–103).

The larger sample makes ANALYZE of agent_terms take ~2 s at 2,000,000 rows, and the longer list
of common values adds ~0.1 ms to planning a search. SQLite plans these queries from the driver
the search planner picks and is unchanged.

Revision ID: 0008_search_statistics
Revises: 0005_search_vector
Create Date: 2026-11-22 08:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0008_search_statistics"
down_revision = "0005_search_vector"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("ALTER TABLE agent_terms ALTER COLUMN value SET STATISTICS 1000")
    op.execute("CREATE STATISTICS st_agent_terms_kind_value (dependencies) ON kind, value FROM agent_terms")
    # Until autovacuum next analyzes the table, plans would use the old statistics.
    op.execute("ANALYZE agent_terms")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("DROP STATISTICS st_agent_terms_kind_value")
    op.execute("ALTER TABLE agent_terms ALTER COLUMN value SET STATISTICS -1")
