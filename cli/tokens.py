"""`agentdex tokens`: API tokens, created against the registry's database directly."""

from __future__ import annotations

import json

import click

from cli.exits import CliError, ExitCode, reports_errors
from cli.local import local_services


@click.group()
def tokens() -> None:
    """Create API tokens (run where the registry's database is reachable)."""


@tokens.command("create")
@click.argument("name")
@click.option("--scope", "scopes", multiple=True, required=True, help="agents:write, relay or admin; repeatable.")
@click.option("--principal", default=None, help="Owner of the token (default: NAME).")
@click.option("--json", "as_json", is_flag=True, help='Print {"token": ...}.')
@reports_errors
def create(name: str, scopes: tuple[str, ...], principal: str | None, as_json: bool) -> None:
    """Create a token; it is printed once and stored only as a hash."""
    from registry.errors import RegistryError

    services = local_services()
    try:
        issued = services.tokens.create(name, scopes, principal)
    except RegistryError as error:
        raise CliError(str(error), ExitCode.USAGE) from None
    if as_json:
        click.echo(
            json.dumps(
                {
                    "token": issued.token,
                    "name": issued.name,
                    "principal": issued.principal,
                    "scopes": list(issued.scopes),
                }
            )
        )
    else:
        click.echo(f"Token for {issued.principal} ({' '.join(issued.scopes)}), shown once:\n{issued.token}")
