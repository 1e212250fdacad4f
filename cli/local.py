"""Commands that work on the registry's database directly (tokens, registry keys, serve, worker):
which database (`--database`, else AGENTDEX_DATABASE_URL, else ./agentdex.db), settings from the
environment, and the services built on them.

Only `serve`, `worker` and `db upgrade` create a database. The admin commands (`tokens`, `keys
rotate|list`) refuse one that does not exist: run in the wrong directory they would otherwise make
an empty database there, and print a token that the running registry then refuses.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from registry.container import Services
    from registry.settings import Settings

DATABASE_VARIABLE = "AGENTDEX_DATABASE_URL"
HOW_TO_CHOOSE = f"name the registry's database with --database URL or {DATABASE_VARIABLE}"

database_option = click.option(
    "--database",
    envvar=DATABASE_VARIABLE,
    default=None,
    metavar="URL",
    help=f"The registry's database (env {DATABASE_VARIABLE}; default: sqlite:///./agentdex.db in the current directory).",
)


def load_settings(database: str | None = None) -> Settings:
    """Settings from `AGENTDEX_*`, with `database` (from --database) in place of AGENTDEX_DATABASE_URL.

    Raises CliError (exit 2) naming the bad variable.
    """
    from registry.settings import Settings, SettingsError

    env = os.environ if database is None else {**os.environ, DATABASE_VARIABLE: database}
    try:
        return Settings.from_env(env)
    except SettingsError as error:
        raise CliError(f"configuration: {error}", ExitCode.USAGE) from None


def local_services(database: str | None = None) -> Services:
    """The registry's services on its existing database (`database`, else AGENTDEX_DATABASE_URL,
    else ./agentdex.db), for the admin commands.

    Raises CliError: exit 2 when the database does not exist or has no schema (it is never created
    here), or the configuration is bad; exit 4 when the database server cannot be reached.
    """
    from registry.container import build_services

    require_database(_database_url(database))  # before the settings, which would make a secret beside it
    return build_services(load_settings(database))


def require_database(url: str) -> None:
    """Check that the database at `url` exists and has the registry's tables, creating nothing.

    Raises CliError: exit 2 when there is no such database or it has no tables, exit 4 when its
    server cannot be reached (or refuses the connection).
    """
    from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError

    from registry.db import make_engine
    from registry.migrate import is_empty

    path = _sqlite_file(url)
    if path is not None and not _exists(path):
        raise CliError(
            f"no database at {os.path.abspath(path)} ({_chosen_by()}), and this command does not create one: "
            f"run it where `agentdex serve` keeps its database, or {HOW_TO_CHOOSE}",
            ExitCode.USAGE,
            code="database_not_found",
        )
    try:
        engine = make_engine(url)
    except ArgumentError:
        raise CliError(f"{url!r} is not a database URL ({_chosen_by()})", ExitCode.USAGE) from None
    except ImportError as error:  # a database whose driver is not installed (mysql://…)
        message = f"{_shown(url)} needs the database driver {error.name!r}, which is not installed ({_chosen_by()})"
        raise CliError(message, ExitCode.USAGE) from None
    try:
        empty = is_empty(engine)
    except OperationalError as error:
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise CliError(
            f"cannot open the database at {_shown(url)}: {reason}; {HOW_TO_CHOOSE}",
            ExitCode.UNREACHABLE,
            code="database_unreachable",
        ) from None
    except DatabaseError:  # SQLite on a file that is something else
        message = f"{_shown(url)} is not a database ({_chosen_by()}); {HOW_TO_CHOOSE}"
        raise CliError(message, ExitCode.USAGE, code="database_not_found") from None
    finally:
        engine.dispose()
    if empty:
        raise CliError(
            f"the database at {_shown(url)} has no tables, so it is not the registry's: {HOW_TO_CHOOSE}, "
            "or create the schema with `agentdex db upgrade`",
            ExitCode.USAGE,
            code="database_not_found",
        )


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name no file can have: too long, a NUL in it
        return False


def _database_url(database: str | None) -> str:
    from registry.settings import DEFAULT_DATABASE_URL

    return (database or os.environ.get(DATABASE_VARIABLE) or DEFAULT_DATABASE_URL).strip()


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL; None for other databases, in-memory ones and URLs that do not parse
    (the settings report those)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _chosen_by() -> str:
    context = click.get_current_context(silent=True)
    source = context.get_parameter_source("database") if context is not None else None
    if source is click.core.ParameterSource.COMMANDLINE:
        return "from --database"
    if source is click.core.ParameterSource.ENVIRONMENT or os.environ.get(DATABASE_VARIABLE):
        return f"from {DATABASE_VARIABLE}"
    return f"{DATABASE_VARIABLE} is not set, so ./agentdex.db in the current directory"


def _shown(url: str) -> str:
    """A SQLite database's file, another database's URL without its password."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    path = _sqlite_file(url)
    if path is not None:
        return os.path.abspath(path)  # not `resolve`, which fails on names no file can have
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url
