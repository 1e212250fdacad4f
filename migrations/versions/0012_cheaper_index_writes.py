"""Writing an agent's search rows costs the database less: no foreign key on its terms, and on
PostgreSQL a text vector built by the registry instead of `to_tsvector`.

Measured on PostgreSQL over the rows of 12,000 bench agents (`bench/catalog.py` cards), inserted
into fresh copies of the tables in one statement each:
- the 229,261 term rows took 2,086 ms with the foreign key to `agents` and 852 ms without: the
  key's check costs ~5 µs a row, ~0.1 ms a registration;
- `to_tsvector('simple', …)` alone took 1,868 ms for the 12,000 documents (0.16 ms each), and
  the search rows took 2,131 ms with it against 478 ms given the vector.

Terms are an index of the agent's current card, written and removed only with it
(`CatalogWriter`), so the key's cascade is replaced by the delete that removes the agent. The
vector is now the document's distinct words as `TextIndex.vector` makes them (the tokenisation
of SQLite's FTS5 table), without positions (matching needs none), and the document text is no
longer kept. Vectors are rebuilt here from the stored documents, ~2,000 agents a statement.
SQLite rebuilds its term table without the key, as migration 0011 did.

Revision ID: 0012_cheaper_index_writes
Revises: 0011_sqlite_terms_without_rowid
Create Date: 2026-11-23 03:10:00
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from registry.catalog.text_index import TextIndex

revision = "0012_cheaper_index_writes"
down_revision = "0011_sqlite_terms_without_rowid"
branch_labels = None
depends_on = None

_FOREIGN_KEY = "CONSTRAINT fk_agent_terms_agent_pk_agents FOREIGN KEY(agent_pk) REFERENCES agents (pk) ON DELETE CASCADE"
_CHUNK = 2000


def _rebuild_sqlite_terms(constraints: str) -> None:
    op.execute("CREATE TABLE agent_terms_rebuilt (agent_pk INTEGER NOT NULL, kind VARCHAR(10) NOT NULL, "
               f"value VARCHAR(500) NOT NULL, CONSTRAINT pk_agent_terms PRIMARY KEY (agent_pk, kind, value){constraints}) "
               "WITHOUT ROWID")
    op.execute("INSERT INTO agent_terms_rebuilt (agent_pk, kind, value) "
               "SELECT agent_pk, kind, value FROM agent_terms ORDER BY agent_pk, kind, value")
    op.execute("DROP TABLE agent_terms")  # and its lookup index
    op.execute("ALTER TABLE agent_terms_rebuilt RENAME TO agent_terms")
    op.execute("CREATE INDEX ix_agent_terms_lookup ON agent_terms (kind, value, agent_pk)")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _rebuild_sqlite_terms("")
        return
    op.execute("ALTER TABLE agent_terms DROP CONSTRAINT fk_agent_terms_agent_pk_agents")
    op.execute("ALTER TABLE agent_search ALTER COLUMN document_tsv DROP EXPRESSION")
    after = 0
    while True:
        rows = bind.execute(text("SELECT agent_pk, document FROM agent_search WHERE agent_pk > :after "
                                 "ORDER BY agent_pk LIMIT :n"), {"after": after, "n": _CHUNK}).all()
        if not rows:
            break
        bind.execute(
            text("UPDATE agent_search SET document_tsv = CAST(v.vector AS tsvector) "
                 "FROM unnest(CAST(:pks AS integer[]), CAST(:vectors AS text[])) AS v(pk, vector) "
                 "WHERE agent_search.agent_pk = v.pk"),
            {"pks": [pk for pk, _ in rows], "vectors": [TextIndex.vector(document) for _, document in rows]},
        )
        after = rows[-1][0]
    op.execute("ALTER TABLE agent_search DROP COLUMN document")
    op.execute("ALTER TABLE agent_search ALTER COLUMN document_tsv SET NOT NULL")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite_terms(", " + _FOREIGN_KEY)
        return
    # The documents come back as their distinct words, which is what the old vector was built from.
    op.execute("ALTER TABLE agent_search ADD COLUMN document text")
    op.execute("UPDATE agent_search SET document = array_to_string(tsvector_to_array(document_tsv), ' ')")
    op.execute("ALTER TABLE agent_search ALTER COLUMN document SET NOT NULL")
    op.execute("ALTER TABLE agent_search DROP COLUMN document_tsv")  # and its index
    op.execute("ALTER TABLE agent_search ADD COLUMN document_tsv tsvector "
               "GENERATED ALWAYS AS (to_tsvector('simple', document)) STORED")
    op.execute("CREATE INDEX ix_agent_search_document_tsv ON agent_search USING gin (document_tsv)")
    op.execute(f"ALTER TABLE agent_terms ADD {_FOREIGN_KEY}")
