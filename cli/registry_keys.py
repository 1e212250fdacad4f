"""`agentdex keys rotate | list`: the registry's own signing keys, against its database directly
(run where the registry's database and AGENTDEX_SECRET_KEY are available, like `tokens`).

Exit codes (cli.exits): 0 ok, 1 the registry refused (a concurrent rotation), 2 configuration or
no such database.
"""

from __future__ import annotations

import json

import click

from cli.exits import CliError, ExitCode, reports_errors
from cli.keys import keys
from cli.local import database_option, local_services

ALGORITHMS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


@keys.command("rotate")
@click.option(
    "--alg",
    default=None,
    type=click.Choice(ALGORITHMS),
    help="Algorithm of the key to rotate (default: AGENTDEX_ENDORSEMENT_ALG, EdDSA).",
)
@database_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print the new key as JSON; "retired" is the kid of the key it replaced, or null.',
)
@reports_errors
def rotate(alg: str | None, database: str | None, as_json: bool) -> None:
    """Make a new active signing key for the registry (for endorsements and its own card).

    The key it replaces stays published in /.well-known/jwks.json for AGENTDEX_KEY_GRACE_PERIOD
    (14 days by default), so signatures made with it still verify. Run it where the registry's
    database is.

    \f
    Raises CliError: exit 1 when another rotation of the same algorithm commits first, 2 when the
    database does not exist or the configuration is bad.
    """
    from registry.errors import RegistryError

    services = local_services(database)
    try:
        alg = alg or services.settings.trust.endorsement_alg
        previous = next((k for k in services.registry_keys.list() if k.alg == alg and k.status == "active"), None)
        info = services.registry_keys.rotate(alg)
    except RegistryError as error:
        raise CliError(str(error), ExitCode.FAILED) from None
    finally:
        services.close()
    grace_days = services.settings.trust.key_grace / 86_400
    if as_json:
        click.echo(json.dumps({**info.to_dict(), "retired": previous and previous.kid}))
    elif previous is None:
        click.echo(
            f"new active {info.alg} key {info.kid} ({info.storage}); there was no {alg} key before, none retired"
        )
    else:
        click.echo(
            f"new active {info.alg} key {info.kid} ({info.storage}); the previous one, {previous.kid}, is retired "
            f"and stays in /.well-known/jwks.json for {grace_days:g} days"
        )


@keys.command("list")
@database_option
@click.option("--json", "as_json", is_flag=True, help="Print the keys as JSON.")
@reports_errors
def list_keys(database: str | None, as_json: bool) -> None:
    """List the registry's signing keys, newest first: active, retired (still published) or
    expired. Run it where the registry's database is.

    \f
    Raises CliError (exit 2) when the database does not exist or the configuration is bad.
    """
    services = local_services(database)
    try:
        infos = services.registry_keys.list()
    finally:
        services.close()
    if as_json:
        click.echo(json.dumps({"items": [info.to_dict() for info in infos]}))
        return
    if not infos:
        click.echo("no registry keys yet (the first is created when the registry first signs)")
    for info in infos:
        data = info.to_dict()
        until = f", published until {data['notAfter']}" if info.status == "retired" else ""
        click.echo(f"{info.kid}  {info.alg:<6} {info.status:<8} created {data['createdAt']}{until}  {info.storage}")
