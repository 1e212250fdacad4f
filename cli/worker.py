"""`agentdex worker`: run the scheduled jobs (health probes, re-crawls, pruning).

Any number of workers may run against one PostgreSQL database (or beside `agentdex serve` on
SQLite): the database leases each piece of work to one of them.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from typing import Any

import click

from cli.exits import reports_errors
from cli.local import database_option, load_settings
from cli.server import prepare_schema

JOB_CHOICES = (
    "health-probe",
    "recrawl",
    "prune-health-checks",
    "relay-delivery",
    "prune-relay-messages",
    "tag-counts",
    "manifest-recrawl",
    "events-fanout",
    "domain-recheck",
)  # registry.schedule.JOB_NAMES


@click.command()
@click.option("--once", is_flag=True, help="Run each job until nothing is due, print what was done, exit.")
@click.option("--job", "names", multiple=True, type=click.Choice(JOB_CHOICES), help="Only these jobs; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="With --once: print the reports as JSON.")
@click.option(
    "--niceness",
    default=10,
    show_default=True,
    type=click.IntRange(0, 19),
    help="Lower this process's CPU priority so web processes on the same host answer first (0 keeps it).",
)
@database_option
@reports_errors
def worker(once: bool, names: tuple[str, ...], as_json: bool, niceness: int, database: str | None) -> None:
    """Run the scheduled jobs: health probes, card re-crawls, push relay deliveries and pruning.

    Any number of workers may run against one database; each piece of work goes to one of them.
    Creates the database and its schema if there is none (like `agentdex serve`). Ctrl-C stops
    it after the work it has claimed.

    \f
    Raises CliError: exit 1 when the schema is out of date (PostgreSQL: run `agentdex db
    upgrade`), exit 2 for a bad configuration.
    """
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)  # background work yields the CPU to interactive requests, never the reverse
    from registry import heap
    from registry.container import build_services
    from registry.observability import configure_logging
    from registry.schedule import job_worker, scheduled_jobs

    settings = load_settings(database)
    configure_logging(settings.operations.log_format)
    services = build_services(settings, long_running=True)
    prepare_schema(services.engine, upgrade_existing=settings.is_sqlite)
    jobs = [job for job in scheduled_jobs(services) if not names or job.name in names]
    runner = job_worker(services, jobs)
    heap.settle()
    try:
        if once:
            _print_reports(runner.run_once(), as_json)
        else:
            _run_until_signalled(runner)
    finally:
        runner.stop()
        services.close()


def _run_until_signalled(runner: Any) -> None:
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    runner.start()
    click.echo(f"worker {runner.context.owner} running {', '.join(j.name for j in runner.jobs)}; Ctrl-C stops it")
    stop.wait()
    click.echo("stopping: finishing the work already claimed")


def _print_reports(reports: list[Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([vars(report) for report in reports], indent=2))
        return
    for report in reports:
        click.echo(str(report))
