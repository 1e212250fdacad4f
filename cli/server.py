"""`agentdex serve` and `agentdex db`: run the registry and manage its schema."""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

import click

from cli.exits import CliError, ExitCode, reports_errors
from cli.local import database_option, load_settings

if TYPE_CHECKING:  # the registry is imported only by the commands that run it
    from sqlalchemy import Engine

    from registry.container import Services
    from registry.jobs.worker import Worker


@click.group()
def db() -> None:
    """Manage the registry's database schema."""


@db.command("upgrade")
@database_option
@reports_errors
def db_upgrade(database: str | None) -> None:
    """Create the database schema, or bring it up to date (SQLite or PostgreSQL).

    Run it once before starting web processes and workers on PostgreSQL (`agentdex serve`
    does it by itself on SQLite). Creates the SQLite file if there is none.

    \f
    Raises CliError (exit 1) for a database of a development build or a newer release, exit 2
    for a bad configuration.
    """
    from registry.db import make_engine
    from registry.migrate import current_revisions, upgrade

    engine = make_engine(load_settings(database).database_url)
    upgrade(engine)
    click.echo(f"database at revision {', '.join(sorted(current_revisions(engine)))}")


@click.command()
@click.option(
    "--host",
    envvar="AGENTDEX_HOST",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on (env AGENTDEX_HOST).",
)
@click.option(
    "--port",
    envvar="AGENTDEX_PORT",
    default=8420,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (env AGENTDEX_PORT).",
)
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1), help="Request threads.")
@click.option(
    "--jobs/--no-jobs",
    default=True,
    show_default=True,
    help="Run the scheduled jobs (health probes, re-crawls) in this process too.",
)
@database_option
@reports_errors
def serve(host: str, port: int, threads: int, jobs: bool, database: str | None) -> None:
    """Run the registry: the web API, and the scheduled jobs in the same process.

    The database is created if there is none (SQLite: ./agentdex.db, with its secret key in
    ./agentdex.db.secret), its schema is created or upgraded, and on an empty database a one-time
    admin token is printed. Ctrl-C stops it.

    \f
    Raises CliError: exit 1 when the address is taken or the schema is out of date, exit 2 for a
    bad configuration.
    """
    listener = listen(host, port)  # first: on a busy port nothing else is started
    try:
        _serve(listener, threads, jobs, database)
    finally:
        listener.close()


def _serve(listener: socket.socket, threads: int, jobs: bool, database: str | None) -> None:
    from waitress import serve as waitress_serve

    from registry import heap
    from registry.app import create_app
    from registry.container import build_services
    from registry.observability import configure_logging

    settings = load_settings(database)
    configure_logging(settings.operations.log_format)
    services = build_services(settings, long_running=True)
    prepare_schema(services.engine, upgrade_existing=settings.is_sqlite)
    admin = services.tokens.bootstrap_admin()
    if admin is not None:
        click.echo(f"First start: admin token (shown once, keep it safe):\n  {admin.token}")
    app = create_app(services=services)
    host, port = listener.getsockname()[:2]
    click.echo(f"Agentdex listening on http://{_url_host(host)}:{port} ({settings.database_url})")
    heap.settle()
    worker = _start_jobs(services) if jobs else None
    try:
        waitress_serve(app, sockets=[listener], threads=threads, ident="agentdex")
    finally:
        if worker is not None:
            worker.stop(wait=False)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening, for the web server to take over.

    Raises CliError (exit 1) naming the address when it cannot be had (most often: in use).
    """
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise CliError(f"cannot listen on {host}:{port}: {error.strerror}; choose --host", ExitCode.USAGE) from None
    except UnicodeError:  # a name the resolver cannot even encode (an empty or 64+ character label)
        raise CliError(f"cannot listen on {host}:{port}: not a host name; choose --host", ExitCode.USAGE) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait out TIME_WAIT
    try:
        sock.bind(address)
        sock.listen(1024)  # at once: a second process binding the port now fails here, not later
    except OSError as error:
        sock.close()
        reason = (
            "the address is already in use (another `agentdex serve`?)"
            if error.errno == errno.EADDRINUSE
            else (error.strerror or str(error))
        )
        raise CliError(
            f"cannot listen on {host}:{port}: {reason}; choose another port with --port or AGENTDEX_PORT",
            ExitCode.FAILED,
        ) from None
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _start_jobs(services: Services) -> Worker:
    """The embedded default runs the same jobs as `agentdex worker`, beside the web threads; the
    worker's pool is bounded (AGENTDEX_WORKER_THREADS) so probing never starves the requests."""
    from registry.schedule import job_worker, scheduled_jobs

    worker = job_worker(services, scheduled_jobs(services))
    worker.start()
    return worker


def prepare_schema(engine: Engine, *, upgrade_existing: bool) -> None:
    """Create the schema of an empty database (and, with `upgrade_existing`, bring an older one up
    to date), saying so on stderr when this process did it: processes started together wait for
    each other (`registry.migrate.upgrade` takes a lock) and the first one does the work.

    Raises CliError (exit 1) when the schema is out of date and `upgrade_existing` is off.
    """
    from registry.migrate import is_current, is_empty, upgrade

    if is_empty(engine) or upgrade_existing:
        change = upgrade(engine)
        if change.created:
            click.echo(f"created the database schema (revision {', '.join(sorted(change.after))})", err=True)
        elif change.changed:
            click.echo(f"upgraded the database schema to revision {', '.join(sorted(change.after))}", err=True)
    elif not is_current(engine):
        raise CliError("the database schema is out of date: run `agentdex db upgrade` first", ExitCode.FAILED)
