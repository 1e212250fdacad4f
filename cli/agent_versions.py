"""`agentdex refresh ID` (fetch the agent's card again now) and `agentdex versions ID` (the card's
stored history, with what changed between versions), over the registry's API."""

from __future__ import annotations

from typing import Any

import click

from cli.client import json_option, make_client, registry_option, segment, token_option
from cli.exits import reports_errors
from cli.output import emit, short_time, table

CHANGES_SHOWN = 4  # pointers per version in the table; --json has them all


@click.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@token_option
@json_option
@reports_errors
def refresh(agent_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Fetch an agent's card again now.

    Does not wait for the next scheduled re-crawl. A changed card becomes a new version (see
    `agentdex versions`); a card that is no longer valid is refused and the current one stays.

    \b
    Example:
      agentdex refresh 5b0c1d2e
    """
    client = make_client(registry, token)
    before = client.call("GET", f"/v1/agents/{segment(agent_id)}")
    agent = client.call("POST", f"/v1/agents/{segment(before['id'])}/refresh")
    result = {"changed": agent["cardVersion"] != before["cardVersion"], "agent": agent}
    emit(result, as_json, _say_refreshed)


def _say_refreshed(result: dict[str, Any]) -> None:
    agent = result["agent"]
    what = "changed: now version" if result["changed"] else "unchanged: still version"
    click.echo(f"{agent['name']} ({agent['id']}): card {what} {agent['cardVersion']}")


@click.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@json_option
@reports_errors
def versions(agent_id: str, registry: str, as_json: bool) -> None:
    """Show an agent's card history.

    Newest first: where each version came from, whether it was valid, and what changed since
    the one before (+ added, - removed, ~ changed, as JSON pointers). The current version is
    marked with *.

    \b
    Example:
      agentdex versions 5b0c1d2e --json
    """
    history = make_client(registry).call("GET", f"/v1/agents/{segment(agent_id)}/versions")
    emit(history, as_json, _version_table)


def _version_table(history: dict[str, Any]) -> None:
    rows = [
        (
            f"{v['version']}{' *' if v['isCurrent'] else ''}",
            v["source"],
            short_time(v["fetchedAt"]),
            v["protocolVersion"],
            "valid" if v["valid"] else f"invalid ({len(v['issues'])} issues)",
            _changes(v["changes"]),
        )
        for v in history["items"]
    ]
    table(("VERSION", "SOURCE", "FETCHED", "PROTOCOL", "VALID", "CHANGES"), rows)


def _changes(changes: dict[str, list[str]] | None) -> str:
    if changes is None:
        return "(first version)"
    marks = (("+", "added"), ("-", "removed"), ("~", "changed"))
    marked = [f"{mark}{path}" for mark, kind in marks for path in changes[kind]]
    if not marked:
        return "(same content)"  # e.g. an invalid version between two equal valid ones
    more = f" and {len(marked) - CHANGES_SHOWN} more" if len(marked) > CHANGES_SHOWN else ""
    return " ".join(marked[:CHANGES_SHOWN]) + more
