"""`agentdex ard`: the registry's ARD API (the discovery standard) from the command line — search
with filters and federation, and explore its facets. Talks to `{registry}/ard/…`."""

from __future__ import annotations

from typing import Any

import click

from cli.client import json_option, make_client, registry_option
from cli.exits import CliError, ExitCode, reports_errors
from cli.output import emit

FACETS = ("tags", "publisher", "inputModes", "outputModes", "capabilities", "protocolVersion", "health", "signature")

filter_option = click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="KEY=VALUE[,VALUE…]",
    help="Narrow by a field (tags, publisher, inputModes, outputModes, capabilities, protocolVersion, health, "
    "signature); values of one key match any, different keys all. Repeatable.",
)


def parse_filters(filters: tuple[str, ...]) -> dict[str, list[str]]:
    """`("tags=finance,fx", "health=up")` as ARD's filter object. Raises CliError (usage) when a
    filter is not KEY=VALUE."""
    parsed: dict[str, list[str]] = {}
    for item in filters:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise CliError(f"--filter {item!r} is not KEY=VALUE (e.g. tags=finance)", ExitCode.USAGE)
        parsed.setdefault(key.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    return parsed


@click.group()
def ard() -> None:
    """The registry's ARD API (Agentic Resource Discovery): search and explore.

    \b
    Examples:
      agentdex ard search "convert currency between euros and yen"
      agentdex ard search "weather" --filter health=up --filter tags=forecast,weather
      agentdex ard search "translate" --federation referrals
      agentdex ard explore --facet tags --facet publisher
    """


@ard.command()
@click.argument("text")
@filter_option
@click.option(
    "--federation",
    type=click.Choice(["auto", "referrals", "none"]),
    default=None,
    help="auto: also ask the registry's upstream registries (its default); referrals: name them; none: only it.",
)
@click.option("--page-size", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--page-token", default=None, help="Continue from a previous page.")
@registry_option
@json_option
@reports_errors
def search(
    text: str,
    filters: tuple[str, ...],
    federation: str | None,
    page_size: int,
    page_token: str | None,
    registry: str,
    as_json: bool,
) -> None:
    """Entries best matching TEXT, each with its score (0–100) and the registry that indexed it."""
    query: dict[str, Any] = {"text": text}
    if filters:
        query["filter"] = parse_filters(filters)
    body: dict[str, Any] = {"query": query, "pageSize": page_size}
    if federation:
        body["federation"] = federation
    if page_token:
        body["pageToken"] = page_token
    emit(make_client(registry).call("POST", "/ard/search", json=body), as_json, _show_results)


def _show_results(page: dict[str, Any]) -> None:
    for entry in page.get("results", []):
        click.echo(f"{entry.get('score', 0):>3}  {entry.get('displayName')}  {entry.get('identifier')}")
        tags = ", ".join((entry.get("tags") or [])[:8])
        click.echo(f"     {entry.get('url') or '(inline)'}" + (f"\n     tags: {tags}" if tags else ""))
        if entry.get("source"):
            click.echo(f"     from {entry['source']}")
    for referral in page.get("referrals") or []:
        click.echo(f"also ask: {referral.get('displayName')}  {referral.get('url')}")
    more = f"; more with --page-token {page['pageToken']}" if page.get("pageToken") else ""
    click.echo(f"{len(page.get('results', []))} result(s){more}")


@ard.command()
@click.argument("text", required=False)
@filter_option
@click.option(
    "--facet", "facets", multiple=True, type=click.Choice(FACETS), help="A field to count (default: all). Repeatable."
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100), help="Values per facet.")
@registry_option
@json_option
@reports_errors
def explore(
    text: str | None, filters: tuple[str, ...], facets: tuple[str, ...], limit: int, registry: str, as_json: bool
) -> None:
    """How the registry's entries (those matching TEXT and the filters) spread over tags,
    publishers, modes, capabilities, protocol versions, health and signature state."""
    query: dict[str, Any] = {}
    if text:
        query["text"] = text
    if filters:
        query["filter"] = parse_filters(filters)
    body: dict[str, Any] = {"resultType": {"facets": [{"field": f, "limit": limit} for f in facets or FACETS]}}
    if query:
        body["query"] = query
    emit(make_client(registry).call("POST", "/ard/explore", json=body), as_json, _show_facets)


def _show_facets(answer: dict[str, Any]) -> None:
    for field, facet in (answer.get("facets") or {}).items():
        buckets = facet.get("buckets") or []
        click.echo(f"{field}:" + ("" if buckets else " -"))
        for bucket in buckets:
            click.echo(f"  {bucket['count']:>7}  {bucket['value']}")
        if facet.get("otherCount"):
            click.echo(f"  {facet['otherCount']:>7}  (other)")
