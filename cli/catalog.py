"""Catalog commands that talk to a registry over HTTP: register, search, show, deprecate, delete, import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cli.client import json_option, make_client, registry_option, token_option
from cli.exits import CliError, ExitCode, reports_errors


def _emit(payload: Any, as_json: bool, human: Any) -> None:
    if as_json:
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        human(payload)


def _agent_line(agent: dict[str, Any]) -> str:
    tags = ", ".join(agent.get("tags", [])[:8])
    status = "" if agent.get("status") == "active" else f" [{agent.get('status')}]"
    return f"{agent['id']}  {agent['name']}{status}  v{agent.get('version') or '?'}  {agent['cardUrl']}\n    tags: {tags or '-'}"


def _show_registered(agent: dict[str, Any]) -> None:
    click.echo("Registered:")
    _show_agent(agent)


def _show_agent(agent: dict[str, Any]) -> None:
    click.echo(f"{agent['name']}  ({agent['id']})")
    click.echo(f"  card:      {agent['cardUrl']}  (version {agent.get('cardVersion')}, {agent.get('source')})")
    click.echo(
        f"  status:    {agent['status']}" + (f" — {agent['statusMessage']}" if agent.get("statusMessage") else "")
    )
    click.echo(f"  protocol:  {', '.join(agent.get('protocolVersions', []))}")
    caps = [name for name, on in (agent.get("capabilities") or {}).items() if on]
    click.echo(f"  abilities: {', '.join(caps) or '-'}")
    for interface in agent.get("interfaces", []):
        click.echo(f"  interface: {interface.get('protocolBinding')} {interface.get('url')}")
    if "signature" in agent:
        sig = agent["signature"] or {}
        checked = f"  (checked {sig['checkedAt']})" if sig.get("checkedAt") else ""
        click.echo(f"  signature: {sig.get('state', '-')} {' '.join(sig.get('kids') or [])}{checked}")
    if "health" in agent:
        health = agent["health"] or {}
        click.echo(f"  health:    {health.get('state', '-')} {health.get('reason') or ''}")
    click.echo(f"  {agent['description']}")
    for skill in agent.get("skills", []):
        click.echo(f"  - {skill['id']}: {skill['name']}  [{', '.join(skill.get('tags', []))}]")


@click.command()
@click.argument("url")
@click.option("--jwks-url", default=None, help="The agent's own JWKS, whose keys verify its card's signatures.")
@registry_option
@token_option
@json_option
@reports_errors
def register(url: str, jwks_url: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """Register the agent at URL (its base URL or its card URL)."""
    body = {"url": url, **({"jwksUrl": jwks_url} if jwks_url else {})}
    agent = make_client(registry, token).call("POST", "/v1/agents", json=body)
    _emit(agent, as_json, _show_registered)


@click.command()
@click.option("--tag", "tags", multiple=True, help="Skill tag; repeatable (all must match).")
@click.option("--any", "match_any", is_flag=True, help="Match any of the tags instead of all.")
@click.option("--text", default=None, help="Words to find in names, descriptions and skills.")
@click.option("--skill", default=None, help="Skill id.")
@click.option("--input-mode", default=None, help="Media type the agent accepts.")
@click.option("--output-mode", default=None, help="Media type the agent produces.")
@click.option(
    "--capability",
    "capabilities",
    multiple=True,
    type=click.Choice(["streaming", "pushNotifications", "extendedAgentCard"]),
)
@click.option("--status", default=None, type=click.Choice(["active", "deprecated", "any"]))
@click.option(
    "--health",
    default=None,
    type=click.Choice(["up", "degraded", "down", "unknown"]),
    help="Only agents in this health state.",
)
@click.option("--include-dead", is_flag=True, help="Also agents hidden for being down too long.")
@click.option("--verified", is_flag=True, help="Only agents whose card signature verified.")
@click.option(
    "--signature",
    default=None,
    type=click.Choice(["verified", "invalid", "unverifiable", "unsigned"]),
    help="Only agents in this signature state.",
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 200))
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@json_option
@reports_errors
def search(
    tags: tuple[str, ...],
    match_any: bool,
    text: str | None,
    skill: str | None,
    input_mode: str | None,
    output_mode: str | None,
    capabilities: tuple[str, ...],
    status: str | None,
    health: str | None,
    include_dead: bool,
    verified: bool,
    signature: str | None,
    limit: int,
    cursor: str | None,
    registry: str,
    as_json: bool,
) -> None:
    """Find agents by skill tags, text, modes and capabilities."""
    if verified and signature not in (None, "verified"):
        raise CliError("--verified and --signature contradict each other", ExitCode.USAGE)
    params: dict[str, Any] = {
        "tag": list(tags),
        "q": text,
        "skill": skill,
        "inputMode": input_mode,
        "outputMode": output_mode,
        "capability": list(capabilities),
        "status": status,
        "limit": limit,
        "cursor": cursor,
        "health": health,
        "includeDead": "true" if include_dead else None,
        "signature": "verified" if verified else signature,
    }
    if match_any:
        params["match"] = "any"
    page = make_client(registry).call("GET", "/v1/agents", params={k: v for k, v in params.items() if v})

    def human(p: dict[str, Any]) -> None:
        for agent in p["items"]:
            click.echo(_agent_line(agent))
        click.echo(
            f"{len(p['items'])} agent(s)" + (f"; more with --cursor {p['nextCursor']}" if p["nextCursor"] else "")
        )

    _emit(page, as_json, human)


@click.command()
@click.argument("agent_id")
@registry_option
@json_option
@reports_errors
def show(agent_id: str, registry: str, as_json: bool) -> None:
    """Show one agent."""
    _emit(make_client(registry).call("GET", f"/v1/agents/{agent_id}"), as_json, _show_agent)


@click.command()
@click.argument("agent_id")
@click.option("--message", default=None, help="Why, and what to use instead.")
@registry_option
@token_option
@json_option
@reports_errors
def deprecate(agent_id: str, message: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """Mark an agent deprecated (hidden from default search, still readable)."""
    body = {"status": "deprecated", **({"statusMessage": message} if message else {})}
    agent = make_client(registry, token).call("PATCH", f"/v1/agents/{agent_id}", json=body)
    _emit(agent, as_json, lambda a: click.echo(f"{a['id']} is now {a['status']}"))


@click.command()
@click.argument("agent_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@registry_option
@token_option
@reports_errors
def delete(agent_id: str, yes: bool, registry: str, token: str | None) -> None:
    """Remove an agent and its history (the audit log keeps the fact)."""
    if not yes and not click.confirm(f"Delete agent {agent_id}?", default=False):
        raise CliError("not deleted", ExitCode.FAILED)
    make_client(registry, token).call("DELETE", f"/v1/agents/{agent_id}")
    click.echo(f"deleted {agent_id}")


@click.command("import")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--batch", default=500, show_default=True, type=click.IntRange(1, 1000), help="Cards per request.")
@click.option("--parallel", default=2, show_default=True, type=click.IntRange(1, 16), help="Requests in flight.")
@registry_option
@token_option
@json_option
@reports_errors
def import_(path: Path, batch: int, parallel: int, registry: str, token: str | None, as_json: bool) -> None:
    """Register many cards from a JSON Lines file: one {"card": {...}, "cardUrl": "..."} per line,
    with "jwksUrl": "..." where the agent publishes the keys that verify its card."""
    from cli.importer import import_file

    summary = import_file(lambda: make_client(registry, token), path, batch, progress=not as_json, parallel=parallel)
    _emit(summary, as_json, lambda s: click.echo(f"created {s['created']}, failed {s['failed']}"))
    if summary["failed"]:
        raise CliError(f"{summary['failed']} card(s) were not imported", ExitCode.FAILED)
