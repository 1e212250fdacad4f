"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from registry.migrate import is_current
from registry.models import Base


def test_database_is_at_head_and_matches_the_models(services):
    assert is_current(services.engine)
    with services.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    # The text index tables are created by the migration outside the models on purpose.
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name.startswith(("agent_fts", "agent_search")))]
    diff = [d for d in diff if not (d[0] == "remove_index" and d[1].name.startswith("ix_agent_search_document"))]
    assert diff == []
