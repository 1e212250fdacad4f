"""`agentdex agents claim|approve|reject`: what the proven owner of a domain does to entries on it
(approve and reject also an admin). Thin: each is one call to the registry's API."""

from __future__ import annotations

from typing import Any

import click

from cli.client import json_option, make_client, registry_option, segment, token_option
from cli.exits import reports_errors
from cli.output import emit


@click.group()
def agents() -> None:
    """Claim an entry on your domain, approve or reject entries in review.

    Each needs a proven domain (`agentdex domains add DOMAIN`, then `agentdex domains verify
    DOMAIN`): the agent's card URL must lie in it. An admin token may approve and reject too."""


@agents.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@token_option
@json_option
@reports_errors
def claim(agent_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Take the entry of an agent on your proven domain, whoever registered it.

    Nothing else about it changes; the previous owner finds the claim in the audit log.

    \b
    Example:
      agentdex agents claim 5b0c1d2e
    """
    result = make_client(registry, token).call("POST", f"/v1/agents/{segment(agent_id)}/claim")
    emit(result, as_json, _say_claimed)


@agents.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@token_option
@json_option
@reports_errors
def approve(agent_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """List an entry that waits for review (pending, or rejected before).

    \b
    Example:
      agentdex agents approve 5b0c1d2e
    """
    result = make_client(registry, token).call("POST", f"/v1/agents/{segment(agent_id)}/approve")
    emit(result, as_json, lambda r: click.echo(f"{r['id']} is now {r['status']}"))


@agents.command()
@click.argument("agent_id", metavar="ID")
@click.option("--reason", required=True, help="Why: the entry keeps it, and its owner reads it.")
@registry_option
@token_option
@json_option
@reports_errors
def reject(agent_id: str, reason: str, registry: str, token: str | None, as_json: bool) -> None:
    """Refuse an entry that waits for review; it stays unlisted, with the reason.

    \b
    Example:
      agentdex agents reject 5b0c1d2e --reason "not our agent"
    """
    body = {"reason": reason}
    result = make_client(registry, token).call("POST", f"/v1/agents/{segment(agent_id)}/reject", json=body)
    emit(result, as_json, lambda r: click.echo(f"{r['id']} is now {r['status']}: {r['statusMessage']}"))


def _say_claimed(result: dict[str, Any]) -> None:
    if result["claimed"]:
        click.echo(f"{result['id']} is now {result['owner']}'s")
    else:
        click.echo(f"{result['id']} was {result['owner']}'s already")
