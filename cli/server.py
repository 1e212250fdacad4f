"""`agentdex serve` and `agentdex db`: run the registry and manage its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cli.exits import CliError, ExitCode, reports_errors
from cli.local import load_settings

if TYPE_CHECKING:  # the registry is imported only by the commands that run it
    from sqlalchemy import Engine

    from registry.container import Services
    from registry.jobs.worker import Worker


@click.group()
def db() -> None:
    """Manage the database schema."""


@db.command("upgrade")
@reports_errors
def db_upgrade() -> None:
    """Apply every pending migration (SQLite or PostgreSQL)."""
    from registry.db import make_engine
    from registry.migrate import current_revisions, upgrade

    engine = make_engine(load_settings().database_url)
    upgrade(engine)
    click.echo(f"database at revision {', '.join(sorted(current_revisions(engine)))}")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8420, show_default=True, type=int)
@click.option("--threads", default=8, show_default=True, type=int, help="Request threads.")
@click.option(
    "--jobs/--no-jobs",
    default=True,
    show_default=True,
    help="Run the scheduled jobs (health probes, re-crawls) in this process too.",
)
@reports_errors
def serve(host: str, port: int, threads: int, jobs: bool) -> None:
    """Run the registry (web and scheduled jobs in one process) on the configured database.

    On the embedded default (SQLite) the schema is created or upgraded on start; on an empty
    database a one-time admin token is printed.
    """
    from cli.logs import configure_logging

    configure_logging()
    from waitress import serve as waitress_serve

    from registry import heap
    from registry.app import create_app
    from registry.container import build_services

    settings = load_settings()
    services = build_services(settings, long_running=True)
    _prepare_schema(services.engine, upgrade_existing=settings.is_sqlite)
    admin = services.tokens.bootstrap_admin()
    if admin is not None:
        click.echo(f"First start: admin token (shown once, keep it safe):\n  {admin.token}")
    app = create_app(services=services)
    click.echo(f"Agentdex listening on http://{host}:{port} ({settings.database_url})")
    heap.settle()
    worker = _start_jobs(services) if jobs else None
    try:
        waitress_serve(app, host=host, port=port, threads=threads, ident="agentdex")
    finally:
        if worker is not None:
            worker.stop(wait=False)


def _start_jobs(services: Services) -> Worker:
    """The embedded default runs the same jobs as `agentdex worker`, beside the web threads; the
    worker's pool is bounded (AGENTDEX_WORKER_THREADS) so probing never starves the requests."""
    from registry.jobs.worker import Worker
    from registry.schedule import scheduled_jobs

    worker = Worker(scheduled_jobs(services), threads=services.settings.worker.threads)
    worker.start()
    return worker


def _prepare_schema(engine: Engine, *, upgrade_existing: bool) -> None:
    from registry.migrate import is_current, is_empty, upgrade

    if is_empty(engine) or upgrade_existing:
        upgrade(engine)
    elif not is_current(engine):
        raise CliError("the database schema is out of date: run `agentdex db upgrade` first", ExitCode.FAILED)
