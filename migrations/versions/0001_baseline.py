"""Baseline: the whole schema of Agentdex 0.1.0, on SQLite and PostgreSQL.

The tables both databases share are in `migrations.baseline_tables` (and `baseline_audit`,
`baseline_ownership`); this file adds what differs between them. Plain SQLAlchemy and SQL only, nothing from the application: a revision
describes the schema as it was when written, whatever the models say later
(`tests/registry/test_migrations.py` checks that models and migrated schema agree).

The full-text index lives outside the models because each database has its own: an FTS5 table
on SQLite, a table of text vectors with a GIN index on PostgreSQL.

Revision ID: 0001_baseline
Revises: (none)
Create Date: 2026-11-24 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from migrations.baseline_audit import AUDIT_TABLES, create_audit_table
from migrations.baseline_ownership import OWNERSHIP_TABLES, create_ownership_tables
from migrations.baseline_tables import TABLES, create_tables

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

# The columns PostgreSQL compresses with LZ4 when the server has it, rather than the default pglz,
# which is slower both ways: the agent's largest values (the profile, read with every search
# result, first) and the raw card.
LZ4_COLUMNS = {
    "agents": """profile description interfaces tags name capabilities input_modes output_modes protocol_versions
                 signature_kids health_window""".split(),
    "agent_cards": ["raw"],
}
LZ4_AVAILABLE = sa.text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")


def upgrade() -> None:
    create_tables()
    create_audit_table()
    _manifest_tables()
    _a2a_tasks()
    _change_events()
    _job_runs()
    create_ownership_tables()
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _sqlite_text_index()
    elif dialect == "postgresql":
        _postgresql_text_index()
        _postgresql_relay_order()
        _postgresql_lz4()


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE agent_fts_terms")
        op.execute("DROP TABLE agent_fts")
    else:
        op.execute("DROP TRIGGER relay_messages_notify ON relay_messages")
        op.execute("DROP FUNCTION agentdex_relay_notify()")
        op.execute("DROP SEQUENCE relay_message_order")
        op.drop_table("agent_search")
    for table in OWNERSHIP_TABLES:
        op.drop_table(table)
    op.drop_table("a2a_tasks")
    op.drop_table("job_runs")
    for table in EVENT_TABLES:
        op.drop_table(table)
    for table in MANIFEST_TABLES:
        op.drop_table(table)
    for table in (*AUDIT_TABLES, *TABLES):
        op.drop_table(table)  # and its indexes


# The domains whose ARD manifests are crawled, and which entry listed which agent (child first).
MANIFEST_TABLES = ("manifest_listings", "manifest_sources")


def _manifest_tables() -> None:
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "manifest_sources",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(300), nullable=False),
        sa.Column("manifest_url", sa.String(2048), nullable=False),
        sa.Column("found_via", sa.String(20), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("next_crawl_at", utc, nullable=False),
        sa.Column("crawl_lease_owner", sa.String(100), nullable=True),
        sa.Column("crawl_lease_until", utc, nullable=True),
        sa.Column("crawled_at", utc, nullable=True),
        sa.Column("crawl_failures", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("crawl_error", sa.String(500), nullable=True),
        sa.Column("etag", sa.String(500), nullable=True),
        sa.Column("last_modified", sa.String(100), nullable=True),
        sa.Column("documents", sa.Integer(), nullable=False, server_default=sa.text("1")),
        sa.PrimaryKeyConstraint("pk", name="pk_manifest_sources"),
        sa.UniqueConstraint("domain", name="uq_manifest_sources_domain"),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["principals.id"], name="fk_manifest_sources_owner_id_principals", ondelete="SET NULL"
        ),
    )
    op.create_index("ix_manifest_sources_owner_id", "manifest_sources", ["owner_id"])
    op.create_index("ix_manifest_sources_next_crawl_at", "manifest_sources", ["next_crawl_at"])
    op.create_table(
        "manifest_listings",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("source_pk", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.String(500), nullable=False),
        sa.Column("agent_pk", sa.Integer(), nullable=True),
        sa.Column("catalog_url", sa.String(2048), nullable=False),
        sa.Column("entry_url", sa.String(2048), nullable=True),
        sa.Column("entry_sha256", sa.String(64), nullable=False),
        sa.Column("owned", sa.Boolean(), nullable=False),
        sa.Column("listed", sa.Boolean(), nullable=False),
        sa.Column("deprecated", sa.Boolean(), nullable=False),
        sa.Column("first_listed_at", utc, nullable=False),
        sa.Column("last_listed_at", utc, nullable=False),
        sa.Column("delisted_at", utc, nullable=True),
        sa.PrimaryKeyConstraint("pk", name="pk_manifest_listings"),
        sa.UniqueConstraint("source_pk", "identifier", name="uq_manifest_listings_source_pk_identifier"),
        sa.ForeignKeyConstraint(
            ["source_pk"],
            ["manifest_sources.pk"],
            name="fk_manifest_listings_source_pk_manifest_sources",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["agent_pk"], ["agents.pk"], name="fk_manifest_listings_agent_pk_agents", ondelete="SET NULL"
        ),
    )
    op.create_index("ix_manifest_listings_agent_pk", "manifest_listings", ["agent_pk"])


def _a2a_tasks() -> None:
    # The tasks of the registry's own A2A agent, kept a bounded time for GetTask.
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "a2a_tasks",
        sa.Column("id", sa.String(200), nullable=False),
        sa.Column("context_id", sa.String(200), nullable=False),
        sa.Column("state", sa.String(40), nullable=False),
        sa.Column("principal_id", sa.Integer(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", utc, nullable=False),
        sa.Column("expires_at", utc, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_a2a_tasks"),
        sa.ForeignKeyConstraint(
            ["principal_id"], ["principals.id"], name="fk_a2a_tasks_principal_id_principals", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_a2a_tasks_principal_id", "a2a_tasks", ["principal_id"])
    op.create_index("ix_a2a_tasks_expires_at", "a2a_tasks", ["expires_at"])


# The change-event outbox (emptied by the fan-out: AUTOINCREMENT keeps SQLite from reusing numbers),
# and what an event subscription adds to its relay subscription.
EVENT_TABLES = ("change_events", "event_subscriptions")


def _change_events() -> None:
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "change_events",
        sa.Column("pk", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("type", sa.String(60), nullable=False),
        sa.Column("agent_id", sa.String(40), nullable=False),
        sa.Column("at", utc, nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_change_events"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "event_subscriptions",
        sa.Column("pk", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("types", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("source", sa.String(2048), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_event_subscriptions"),
        sa.ForeignKeyConstraint(
            ["pk"], ["relay_subscriptions.pk"], name="fk_event_subscriptions_pk_relay_subscriptions", ondelete="CASCADE"
        ),
    )


def _job_runs() -> None:
    """Each scheduled job's last run, overwritten by whichever worker ran it (the status page)."""
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "job_runs",
        sa.Column("job", sa.String(60), nullable=False),
        sa.Column("finished_at", utc, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("claimed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(80), nullable=False),
        sa.Column("worked_at", utc, nullable=True),
        sa.PrimaryKeyConstraint("job", name="pk_job_runs"),
    )


def _sqlite_text_index() -> None:
    # rowid = agents.pk. The registry analyses the text (`registry.retrieval.analysis`: folded,
    # stemmed terms joined by spaces), so FTS5 only splits on spaces: the `ascii` tokenizer, which
    # keeps every non-ASCII character as part of a term. Candidates need no positions (no phrases);
    # the columns hold the fields that ranking scores. `agent_fts_terms` counts the agents holding
    # each term.
    op.execute(
        "CREATE VIRTUAL TABLE agent_fts USING fts5(name, skills, tags, description, tokenize='ascii', detail=column)"
    )
    op.execute("CREATE VIRTUAL TABLE agent_fts_terms USING fts5vocab(agent_fts, 'row')")


def _postgresql_text_index() -> None:
    # The analysed fields (`registry.retrieval.analysis`), which ranking scores, and their distinct
    # terms as a vector built by the registry, which finds the candidates.
    op.create_table(
        "agent_search",
        sa.Column("agent_pk", sa.Integer(), nullable=False, autoincrement=False),
        *(sa.Column(field, sa.Text(), nullable=False) for field in ("name", "skills", "tags", "description")),
        sa.Column("document_tsv", postgresql.TSVECTOR(), nullable=False),
        sa.PrimaryKeyConstraint("agent_pk", name="pk_agent_search"),
        sa.ForeignKeyConstraint(
            ["agent_pk"], ["agents.pk"], name="fk_agent_search_agent_pk_agents", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_agent_search_document_tsv", "agent_search", ["document_tsv"], postgresql_using="gin")
    # An embedding's marker is the id of the transaction that wrote it (`CatalogStore` reads them
    # back from the oldest transaction still running).
    op.alter_column("agent_embeddings", "marker", server_default=sa.text("pg_current_xact_id()::text::bigint"))


def _postgresql_relay_order() -> None:
    # Web processes accepting notifications of one task at once never take the same number.
    op.execute("CREATE SEQUENCE relay_message_order")
    # Delivery workers LISTEN on this channel; the trigger notifies in the inserting transaction.
    op.execute(
        "CREATE FUNCTION agentdex_relay_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN PERFORM pg_notify('agentdex_relay', ''); RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER relay_messages_notify AFTER INSERT ON relay_messages "
        "FOR EACH STATEMENT EXECUTE FUNCTION agentdex_relay_notify()"
    )
    # A queue: each message is updated three or four times, and every update of an indexed column
    # leaves a dead index entry that claims step over until a vacuum. Vacuum and analyze after a
    # fixed number of changes rather than a fifth of the table; keep room on each page for updates.
    op.execute(
        "ALTER TABLE relay_messages SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0, "
        "autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0, "
        "autovacuum_analyze_threshold = 5000)"
    )


def _postgresql_lz4() -> None:
    # A server built without LZ4 (or older than PostgreSQL 14, which has no such setting) keeps pglz.
    if not op.get_bind().scalar(LZ4_AVAILABLE):
        return
    for table, columns in LZ4_COLUMNS.items():
        op.execute(f"ALTER TABLE {table} " + ", ".join(f"ALTER COLUMN {c} SET COMPRESSION lz4" for c in columns))
