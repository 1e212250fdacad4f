"""`agentdex tokens create|list|revoke`: API tokens, managed on the registry's database directly
(like `agentdex db`), so the operator needs no token to manage tokens. Admins elsewhere use the
API (`GET /v1/tokens`, `DELETE /v1/tokens/{id}`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from cli.client import json_option
from cli.exits import CliError, ExitCode, reports_errors
from cli.local import database_option, local_services
from cli.output import emit, short_time, table

if TYPE_CHECKING:
    from registry.auth.tokens import TokenInfo
    from registry.container import Services


@click.group()
def tokens() -> None:
    """Create, list and revoke API tokens.

    Run these where the registry's database is reachable (the same AGENTDEX_DATABASE_URL as
    `agentdex serve`); they need no token themselves."""


@contextmanager
def _services(database: str | None) -> Iterator[Services]:
    services = local_services(database)
    try:
        yield services
    finally:
        services.close()


@tokens.command("create")
@click.argument("name")
@click.option(
    "--scope", "scopes", multiple=True, required=True, help="agents:write, relay, metrics:read or admin; repeatable."
)
@click.option("--principal", default=None, help="Owner of the token (default: NAME).")
@click.option("--json", "as_json", is_flag=True, help='Print {"token": ...}.')
@database_option
@reports_errors
def create(name: str, scopes: tuple[str, ...], principal: str | None, as_json: bool, database: str | None) -> None:
    """Create a token.

    It is printed once and stored only as a hash: keep it now.

    \b
    Example:
      agentdex tokens create ci-publisher --scope agents:write
    """
    from registry.errors import RegistryError

    with _services(database) as services:
        try:
            issued = services.tokens.create(name, scopes, principal)
        except RegistryError as error:
            raise CliError(str(error), ExitCode.USAGE) from None
    result = {"token": issued.token, "name": issued.name, "principal": issued.principal, "scopes": list(issued.scopes)}
    emit(
        result,
        as_json,
        lambda r: click.echo(f"Token for {r['principal']} ({' '.join(r['scopes'])}), shown once:\n{r['token']}"),
    )


@tokens.command("list")
@click.option("--all", "include_revoked", is_flag=True, help="Also revoked tokens.")
@json_option
@database_option
@reports_errors
def list_(include_revoked: bool, as_json: bool, database: str | None) -> None:
    """List the registry's tokens.

    Oldest first: id, name, owner, scopes and the token's first characters (the tokens
    themselves are never stored). Revoked tokens only with --all."""
    with _services(database) as services:
        infos = _every_token(services, include_revoked)
    emit({"items": [info.to_dict() for info in infos]}, as_json, _token_table)


def _every_token(services: Services, include_revoked: bool) -> list[TokenInfo]:
    infos: list[TokenInfo] = []
    while page := services.tokens.listed(include_revoked=include_revoked, after=infos[-1].id if infos else 0):
        infos.extend(page)
    return infos


def _token_table(listing: dict[str, Any]) -> None:
    rows = []
    for t in listing["items"]:
        created, revoked = short_time(t["createdAt"]), short_time(t["revokedAt"])
        rows.append((t["id"], t["name"], t["principal"], " ".join(t["scopes"]), f"{t['prefix']}…", created, revoked))
    table(("ID", "NAME", "PRINCIPAL", "SCOPES", "TOKEN", "CREATED", "REVOKED"), rows)


@tokens.command("revoke")
@click.argument("ref", metavar="ID|NAME")
@json_option
@database_option
@reports_errors
def revoke(ref: str, as_json: bool, database: str | None) -> None:
    """Revoke a token for good.

    Calls with it are refused (401, "revoked"). ID|NAME is the token's id from `agentdex
    tokens list`, or its name when only one unrevoked token has it. A running registry may
    still accept it for a few seconds (it caches who a token is).

    \b
    Example:
      agentdex tokens revoke ci-publisher
    """
    with _services(database) as services:
        info, now = services.tokens.revoke(services.tokens.find(ref).id)
    result = {**info.to_dict(), "revokedNow": now}
    emit(result, as_json, _say_revoked)


def _say_revoked(result: dict[str, Any]) -> None:
    token = f"token {result['id']} ({result['name']}, {result['principal']})"
    if result["revokedNow"]:
        from registry.auth.tokens import CACHE_SECONDS

        click.echo(f"revoked {token}; running registries refuse it within {CACHE_SECONDS:g} seconds")
    else:
        click.echo(f"{token} was already revoked at {result['revokedAt']}")
