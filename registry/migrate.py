"""Schema migrations with Alembic, configured in code so they work from an installed package."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

import migrations
from registry.errors import RegistryError


class UnknownSchemaRevision(RegistryError):
    """The database is at a revision this release does not know, so it cannot be upgraded."""

    code = "unknown_schema_revision"


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "heads") -> None:
    """Bring the database to `revision` (default: every head; features add independent branches),
    all or nothing.

    Raises UnknownSchemaRevision for a database made by a development build before 0.1.0 (whose
    fifteen revisions became the one baseline) or by a newer release.
    """
    unknown = current_revisions(engine) - known_revisions(engine)
    if unknown:
        raise UnknownSchemaRevision(
            f"the database is at revision {', '.join(sorted(unknown))}, which this release does not know: "
            "databases created by development builds before 0.1.0 are not upgraded, recreate it"
        )
    with _one_transaction(engine) as config:
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the database back to `revision`, all or nothing."""
    with _one_transaction(engine) as config:
        command.downgrade(config, revision)


@contextlib.contextmanager
def _one_transaction(engine: Engine) -> Iterator[Config]:
    config = alembic_config(engine)
    with engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            # The driver opens a transaction only before INSERT, UPDATE or DELETE: each CREATE,
            # DROP or ALTER would commit on its own, and a migration that failed halfway would
            # leave its first tables behind for the next attempt to trip over.
            connection.exec_driver_sql("BEGIN")
        config.attributes["connection"] = connection
        yield config


def current_revisions(engine: Engine) -> frozenset[str]:
    with engine.connect() as connection:
        return frozenset(MigrationContext.configure(connection).get_current_heads())


def head_revisions(engine: Engine) -> frozenset[str]:
    return frozenset(ScriptDirectory.from_config(alembic_config(engine)).get_heads())


def known_revisions(engine: Engine) -> frozenset[str]:
    return frozenset(script.revision for script in ScriptDirectory.from_config(alembic_config(engine)).walk_revisions())


def is_current(engine: Engine) -> bool:
    """True when every migration has been applied."""
    return current_revisions(engine) == head_revisions(engine)


def is_empty(engine: Engine) -> bool:
    """True when the database has no tables at all (a fresh embedded install)."""
    return not inspect(engine).get_table_names()
