"""Alembic environment, configured in code by `registry.migrate` (no alembic.ini).

It imports nothing from the application: revisions are plain DDL, and autogenerate is not used
at run time (`tests/registry/test_migrations.py` compares the migrated schema with the models).
"""

from __future__ import annotations

from alembic import context

config = context.config
target_metadata = None


def run_migrations_online() -> None:
    connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
