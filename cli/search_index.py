"""`agentdex search reindex`: rebuild the search index on the registry's database directly, after
the embedding model changed (an upgrade says so) or, with --all, after the text analysis did."""

from __future__ import annotations

import click

from cli.catalog import search
from cli.exits import reports_errors
from cli.local import database_option, local_services


@search.command("reindex")
@click.option("--all", "every", is_flag=True, help="Every agent's text and vector, not only missing vectors.")
@database_option
@reports_errors
def reindex(every: bool, database: str | None) -> None:
    """Rebuild the search index from the agents' current cards.

    By default, embeds the agents that have no vector of the current model (after an upgrade
    that changed it; until then they are found by their words only). Run it where the registry's
    database is reachable; it needs no token. Safe to run while the registry serves.

    \b
    Examples:
      agentdex search reindex
      agentdex search reindex --all --database postgresql+psycopg://agentdex@db/agentdex
    """
    services = local_services(database)
    try:
        count = services.search.reindex(every, progress=lambda done: click.echo(f"{done} agent(s)…", err=True))
    finally:
        services.close()
    click.echo(f"Reindexed {count} agent(s).")
