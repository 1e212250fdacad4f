"""`agentdex keys rotate | list`: the registry's own signing keys, against its database directly
(run where the registry's database and AGENTDEX_SECRET_KEY are available, like `tokens`).

Exit codes (cli.exits): 0 ok, 1 the registry refused (a concurrent rotation), 2 configuration.
"""

from __future__ import annotations

import json

import click

from cli.exits import CliError, ExitCode, reports_errors
from cli.keys import keys
from cli.local import local_services

ALGORITHMS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


@keys.command("rotate")
@click.option(
    "--alg",
    default=None,
    type=click.Choice(ALGORITHMS),
    help="Algorithm of the key to rotate (default: AGENTDEX_ENDORSEMENT_ALG, EdDSA).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the new key as JSON.")
@reports_errors
def rotate(alg: str | None, as_json: bool) -> None:
    """Create a new active registry key; the old one stays published for the grace period."""
    from registry.errors import RegistryError

    services = local_services()
    try:
        info = services.registry_keys.rotate(alg or services.settings.trust.endorsement_alg)
    except RegistryError as error:
        raise CliError(str(error), ExitCode.FAILED) from None
    finally:
        services.close()
    if as_json:
        click.echo(json.dumps(info.to_dict()))
    else:
        click.echo(
            f"new active {info.alg} key {info.kid} ({info.storage}); the previous one is retired "
            f"and stays in /.well-known/jwks.json for {services.settings.trust.key_grace / 86_400:g} days"
        )


@keys.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the keys as JSON.")
@reports_errors
def list_keys(as_json: bool) -> None:
    """The registry's signing keys, newest first: active, retired (still published) or expired."""
    services = local_services()
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
