"""Schema migrations with Alembic, configured in code so they work from an installed package."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

import migrations
from registry.db import writer_lock
from registry.errors import RegistryError

# PostgreSQL's advisory lock for schema changes. The two-key form is a key space of its own, apart
# from the one-bigint keys the relay locks tasks with.
SCHEMA_LOCK_KEYS = {"space": 0x61676478, "key": 1}  # "agdx"


class UnknownSchemaRevision(RegistryError):
    """The database is at a revision this release does not know, so it cannot be upgraded."""

    code = "unknown_schema_revision"


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.attributes["engine"] = engine
    return config


@dataclasses.dataclass(frozen=True)
class SchemaChange:
    """The revisions a database was at before and after `upgrade`."""

    before: frozenset[str]
    after: frozenset[str]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def created(self) -> bool:
        """The schema was created from nothing by this call."""
        return not self.before and self.changed


def upgrade(engine: Engine, revision: str = "heads") -> SchemaChange:
    """Bring the database to `revision` (default: every head; features add independent branches),
    all or nothing. Processes that upgrade one database at the same moment (`serve` and `worker`
    started together on a fresh file) take turns: the first migrates, the others find it done.

    Raises UnknownSchemaRevision for a database made by a development build before 0.1.0 (whose
    fifteen revisions became the one baseline) or by a newer release.
    """
    with _one_transaction(engine) as config:
        connection = config.attributes["connection"]
        before = _heads(connection)
        unknown = before - known_revisions(engine)
        if unknown:
            raise UnknownSchemaRevision(
                f"the database is at revision {', '.join(sorted(unknown))}, which this release does not know: "
                "databases created by development builds before 0.1.0 are not upgraded, recreate it"
            )
        command.upgrade(config, revision)
        return SchemaChange(before, _heads(connection))


def downgrade(engine: Engine, revision: str) -> None:
    """Take the database back to `revision`, all or nothing."""
    with _one_transaction(engine) as config:
        command.downgrade(config, revision)


@contextlib.contextmanager
def _one_transaction(engine: Engine) -> Iterator[Config]:
    """One transaction that holds the schema lock: SQLite's writer lock (the file lock its batched
    writers queue on), PostgreSQL's advisory lock. Whoever comes second reads the schema the
    first one committed."""
    config = alembic_config(engine)
    with writer_lock(engine).hold(), engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            # The driver opens a transaction only before INSERT, UPDATE or DELETE: each CREATE,
            # DROP or ALTER would commit on its own, and a migration that failed halfway would
            # leave its first tables behind for the next attempt to trip over. IMMEDIATE takes
            # the write lock now: a deferred transaction that read first could not take it later
            # once another process had written ("database is locked").
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        elif connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:space, :key)"), SCHEMA_LOCK_KEYS)
        config.attributes["connection"] = connection
        yield config


def _heads(connection: Connection) -> frozenset[str]:
    return frozenset(MigrationContext.configure(connection).get_current_heads())


def current_revisions(engine: Engine) -> frozenset[str]:
    with engine.connect() as connection:
        return _heads(connection)


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
