"""`agentdex tokens create|list|revoke`: API tokens.

`create` works on the registry's database directly (like `agentdex db`), so the operator needs no
token to make the first ones. `list` and `revoke` go through the API when a token is given
(--token or AGENTDEX_TOKEN): the caller's own tokens, everyone's for an admin token. Without a
token, or with --database on the command line, they work on the database as the operator."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from cli.client import RegistryClient, json_option, make_client, registry_option, segment, token_option
from cli.durations import duration
from cli.exits import CliError, ExitCode, reports_errors
from cli.local import database_option, local_services
from cli.output import emit, short_time, table

if TYPE_CHECKING:
    from registry.auth.token_info import TokenInfo
    from registry.container import Services


@click.group()
def tokens() -> None:
    """Create, list and revoke API tokens.

    `create` runs where the registry's database is reachable (the same AGENTDEX_DATABASE_URL as
    `agentdex serve`) and needs no token. `list` and `revoke` with a token (--token or
    AGENTDEX_TOKEN) ask the registry: your own tokens (all of them with an admin token); without
    one, or with --database, they open the database as the operator."""


@contextmanager
def _services(database: str | None) -> Iterator[Services]:
    services = local_services(database)
    try:
        yield services
    finally:
        services.close()


def parse_lifetime(text: str) -> dt.timedelta:
    """`30d`, `12h`, `90m`, `3600s`, `2w` as a duration. Raises CliError (exit 2) otherwise."""
    try:
        lifetime = duration(text)
    except OverflowError:
        raise CliError(f"--expires {text!r} is too far away", ExitCode.USAGE) from None
    if not lifetime:  # not a duration, or zero
        raise CliError(
            f"--expires {text!r}: give a positive number and a unit, such as 30d, 12h or 90m", ExitCode.USAGE
        )
    return lifetime


@tokens.command("create")
@click.argument("name")
@click.option(
    "--scope", "scopes", multiple=True, required=True, help="agents:write, relay, metrics:read or admin; repeatable."
)
@click.option("--principal", default=None, help="Owner of the token (default: NAME).")
@click.option(
    "--expires", default=None, metavar="LIFETIME", help="Stop working after 30d, 12h, 90m... (default: never)."
)
@click.option(
    "--domain",
    "domains",
    multiple=True,
    metavar="HOST",
    help="Change only agents whose card URL is on HOST or under it; repeatable (default: anywhere).",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"token": ...}.')
@database_option
@reports_errors
def create(
    name: str,
    scopes: tuple[str, ...],
    principal: str | None,
    expires: str | None,
    domains: tuple[str, ...],
    as_json: bool,
    database: str | None,
) -> None:
    """Create a token.

    It is printed once and stored only as a hash: keep it now. With --domain the token may
    register, change or remove only agents whose card URL host is that domain or one of its
    subdomains (reads are not narrowed).

    \b
    Example:
      agentdex tokens create ci-publisher --scope agents:write --expires 90d --domain example.com
    """
    from registry.errors import RegistryError

    lifetime = parse_lifetime(expires) if expires is not None else None
    with _services(database) as services:
        try:
            issued = services.tokens.create(name, scopes, principal, expires_in=lifetime, domains=domains or None)
        except RegistryError as error:
            raise CliError(str(error), ExitCode.USAGE) from None
    emit(issued.to_dict(), as_json, _say_created)


def _say_created(issued: dict[str, Any]) -> None:
    limits = [f"until {short_time(issued['expiresAt'])} UTC"] if issued["expiresAt"] else []
    limits += [f"on {', '.join(issued['domains'])}"] if issued["domains"] else []
    also = f", {'; '.join(limits)}" if limits else ""
    click.echo(f"Token for {issued['principal']} ({' '.join(issued['scopes'])}{also}), shown once:\n{issued['token']}")


def _through_api(token: str | None) -> bool:
    """A token given, and no --database on the command line: ask the registry as that token."""
    source = click.get_current_context().get_parameter_source("database")
    return bool(token) and source is not click.core.ParameterSource.COMMANDLINE


@tokens.command("list")
@click.option("--all", "include_revoked", is_flag=True, help="Also revoked tokens.")
@json_option
@registry_option
@token_option
@database_option
@reports_errors
def list_(include_revoked: bool, as_json: bool, registry: str, token: str | None, database: str | None) -> None:
    """List tokens: with a token, your own (all with an admin token); else the database's.

    Oldest first: id, name, owner, scopes, domains, the token's first characters (the tokens
    themselves are never stored) and when each was created, last used (to the minute), expires
    and was revoked. Revoked tokens only with --all."""
    if _through_api(token):
        items = _listed_by_api(make_client(registry, token), include_revoked)
    else:
        with _services(database) as services:
            items = [info.to_dict() for info in _every_token(services, include_revoked)]
    emit({"items": items}, as_json, _token_table)


def _every_token(services: Services, include_revoked: bool) -> list[TokenInfo]:
    infos: list[TokenInfo] = []
    while page := services.tokens.listed(include_revoked=include_revoked, after=infos[-1].id if infos else 0):
        infos.extend(page)
    return infos


def _listed_by_api(client: RegistryClient, include_revoked: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, str] = {"limit": "500", **({"includeRevoked": "true"} if include_revoked else {})}
    while True:
        page = client.call("GET", "/v1/tokens", params=params)
        items.extend(page["items"])
        if not page.get("nextCursor"):
            return items
        params["cursor"] = page["nextCursor"]


def _token_table(listing: dict[str, Any]) -> None:
    rows = []
    for t in listing["items"]:
        domains = " ".join(t["domains"]) if t.get("domains") is not None else "any"
        times = [short_time(t.get(field)) for field in ("createdAt", "lastUsedAt", "expiresAt", "revokedAt")]
        rows.append((t["id"], t["name"], t["principal"], " ".join(t["scopes"]), domains, f"{t['prefix']}…", *times))
    table(("ID", "NAME", "PRINCIPAL", "SCOPES", "DOMAINS", "TOKEN", "CREATED", "USED", "EXPIRES", "REVOKED"), rows)


@tokens.command("revoke")
@click.argument("ref", metavar="ID|NAME")
@json_option
@registry_option
@token_option
@database_option
@reports_errors
def revoke(ref: str, as_json: bool, registry: str, token: str | None, database: str | None) -> None:
    """Revoke a token for good: with a token, one of your own (any with an admin token).

    Calls with it are refused (401, "revoked") from the next request on, by every process of the
    registry. ID|NAME is the token's id from `agentdex tokens list`, or its name when only one
    unrevoked token has it.

    \b
    Example:
      agentdex tokens revoke ci-publisher
    """
    if _through_api(token):
        result = _revoked_by_api(make_client(registry, token), ref)
    else:
        with _services(database) as services:
            info, now = services.tokens.revoke(services.tokens.find(ref).id)
        result = {**info.to_dict(), "revokedNow": now}
    emit(result, as_json, _say_revoked)


def _revoked_by_api(client: RegistryClient, ref: str) -> dict[str, Any]:
    """Revoke through the API; a name is looked up among the tokens the caller can see."""
    token_id = ref if ref.isdigit() else _id_by_name(client, ref)
    result: dict[str, Any] = client.call("DELETE", f"/v1/tokens/{segment(token_id)}")
    return result


def _id_by_name(client: RegistryClient, name: str) -> str:
    ids = [item["id"] for item in _listed_by_api(client, include_revoked=False) if item["name"] == name]
    if len(ids) > 1:
        message = f"{len(ids)} tokens are named {name!r} (ids {ids}); give the id"
        raise CliError(message, code="ambiguous_id", details={"candidates": ids})
    if not ids:
        raise CliError(
            f"no token named {name!r} that is not revoked among yours; `agentdex tokens list --all` lists them"
        )
    return str(ids[0])


def _say_revoked(result: dict[str, Any]) -> None:
    token = f"token {result['id']} ({result['name']}, {result['principal']})"
    if result["revokedNow"]:
        click.echo(f"revoked {token}; the registry refuses it from the next request on")
    else:
        click.echo(f"{token} was already revoked at {result['revokedAt']}")
