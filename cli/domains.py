"""`agentdex domains add|verify|list|remove`: prove that you control a domain, over the registry's
API. Under AGENTDEX_OWNERSHIP=verified only the proven owner of an agent's domain may register or
change it. Every command needs a token with `agents:write` (--token or AGENTDEX_TOKEN); exit codes
as everywhere (`cli.exits`): 1 when the registry refuses (a proof that does not hold), 4 when it
cannot be reached.
"""

from __future__ import annotations

from typing import Any

import click

from cli.client import json_option, make_client, registry_option, segment, token_option
from cli.exits import reports_errors
from cli.output import emit, short_time, table


@click.group()
def domains() -> None:
    """Prove that you control a domain, so that its agents are yours.

    Add the domain, publish one of the two challenges it prints (a file on your web server or a
    DNS TXT record), then ask the registry to check it. Proven domains are checked again from time
    to time; one whose challenge disappears lapses.

    \b
    Example:
      agentdex domains add example.com
      agentdex domains verify example.com --method dns
    """


def _challenge_lines(entry: dict[str, Any]) -> None:
    http, dns = entry["challenges"]["http"], entry["challenges"]["dns"]
    click.echo(f"{entry['domain']}: {_status(entry)}")
    ways = "one of two ways" if dns else "this way"  # an IP address has no DNS proof
    click.echo(f"Prove it {ways}, then run `agentdex domains verify`:")
    click.echo(f"  http: serve this text (status 200) at {http['url']}\n        {http['value']}")
    if dns:
        click.echo(f'  dns:  add a TXT record  {dns["name"]}  "{dns["value"]}"')
    if entry["includeSubdomains"]:
        click.echo("  (subdomains are covered once the DNS challenge is proven)")


def _status(entry: dict[str, Any]) -> str:
    status = entry["status"]
    if status == "verified":
        wide = ", with subdomains" if entry["subdomainsCovered"] else ""
        return f"verified by {entry['method']}{wide}"
    return f"{status} ({entry['reason']})" if entry.get("reason") else status


@domains.command("add")
@click.argument("domain")
@click.option("--include-subdomains", is_flag=True, help="Also the names under DOMAIN (needs the DNS proof).")
@registry_option
@token_option
@json_option
@reports_errors
def add(domain: str, include_subdomains: bool, registry: str, token: str | None, as_json: bool) -> None:
    """Add a domain to prove and print its two challenges.

    Adding a domain again prints the same challenges.

    \b
    Example:
      agentdex domains add example.com --include-subdomains
    """
    body = {"domain": domain, "includeSubdomains": include_subdomains}
    emit(make_client(registry, token).call("POST", "/v1/domains", json=body), as_json, _challenge_lines)


@domains.command("verify")
@click.argument("domain")
@click.option("--method", type=click.Choice(["http", "dns"]), required=True, help="Which challenge to check.")
@registry_option
@token_option
@json_option
@reports_errors
def verify(domain: str, method: str, registry: str, token: str | None, as_json: bool) -> None:
    """Ask the registry to check one challenge of a domain you added.

    On success the domain is yours (also when another account held it before). On failure the
    message says what the registry found instead: another value, no record, a 404, no answer.

    \b
    Example:
      agentdex domains verify example.com --method http
    """
    path = f"/v1/domains/{segment(domain)}/verify"
    entry = make_client(registry, token).call("POST", path, json={"method": method})
    emit(entry, as_json, lambda e: click.echo(f"{e['domain']}: {_status(e)}"))


@domains.command("list")
@registry_option
@token_option
@json_option
@reports_errors
def list_(registry: str, token: str | None, as_json: bool) -> None:
    """List your domains (every account's with an admin token) and their state.

    A lapsed domain shows why: its challenge disappeared, or another account proved it since.
    """
    emit(make_client(registry, token).call("GET", "/v1/domains"), as_json, _domain_table)


def _domain_table(listing: dict[str, Any]) -> None:
    rows = [
        (
            entry["domain"],
            entry["owner"],
            _status(entry),
            "yes" if entry["includeSubdomains"] else "no",
            short_time(entry.get("verifiedAt")),
            short_time(entry.get("checkedAt")),
        )
        for entry in listing["items"]
    ]
    table(("DOMAIN", "OWNER", "STATUS", "SUBDOMAINS", "VERIFIED", "CHECKED"), rows)


@domains.command("remove")
@click.argument("domain")
@registry_option
@token_option
@json_option
@reports_errors
def remove(domain: str, registry: str, token: str | None, as_json: bool) -> None:
    """Remove a domain; a proven one is no longer yours.

    \b
    Example:
      agentdex domains remove example.com
    """
    make_client(registry, token).call("DELETE", f"/v1/domains/{segment(domain)}")
    emit({"domain": domain, "removed": True}, as_json, lambda _: click.echo(f"{domain}: removed"))
