"""PostgreSQL: ANALYZE of `agents` skips the columns no query filters, joins or sorts on.

`agents` holds the catalog's filter columns (status, health, the schedules, the keys) beside the
card's payload (name, description, the JSON of interfaces, skills and modes, the profile), 49
columns in all. ANALYZE reads every column of every sampled row, and a late column of a wide row
is found by walking the columns before it: at 20,000 bench agents half of ANALYZE's time went to
that walk (`nocachegetattr`, perf). The payload gets statistics target 0 here, so ANALYZE leaves
it out: 349–368 ms at 20,000 agents before, 141–156 ms after (psql `\\timing`, three runs each).
Health probes update agent rows all day, so autovacuum analyzes this table often.

No search reads those statistics: text queries go through `agent_search`, tags, skills and modes
through `agent_terms`. A column added later gets the default target; one that starts being
filtered on should get its statistics back (`SET STATISTICS -1`).

Revision ID: 0013_payload_statistics
Revises: 0012_cheaper_index_writes, 0002_health, 0003_trust
Create Date: 2026-11-23 05:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0013_payload_statistics"
# A merge: the payload includes columns of the health (0002) and trust (0003) branches.
down_revision = ("0012_cheaper_index_writes", "0002_health", "0003_trust")
branch_labels = None
depends_on = None

PAYLOAD = (
    "name", "description", "version", "provider_org", "provider_url", "documentation_url", "icon_url",
    "protocol_versions", "interfaces", "capabilities", "input_modes", "output_modes", "tags", "profile",
    "card_sha256", "status_message", "health_window", "health_reason", "health_latency_ms", "health_uptime24h",
    "health_successes", "health_failures", "signature_kids", "crawl_error", "crawl_etag", "crawl_last_modified",
)


def _set_statistics(target: int) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE agents " + ", ".join(f"ALTER COLUMN {column} SET STATISTICS {target}" for column in PAYLOAD))


def upgrade() -> None:
    _set_statistics(0)


def downgrade() -> None:
    _set_statistics(-1)
