"""Catalog commands that talk to a registry over HTTP: register, search, show, deprecate,
undeprecate, delete, import, tags. Wherever they take an agent ID, a unique prefix of it (8
characters or more) will do: the registry resolves it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cli.client import given, json_option, make_client, registry_option, segment, token_option
from cli.exits import CliError, ExitCode, reports_errors, result_printed
from cli.output import emit, table


def _agent_line(agent: dict[str, Any]) -> str:
    tags = ", ".join(agent.get("tags", [])[:8])
    status = "" if agent.get("status") == "active" else f" [{agent.get('status')}]"
    return f"{agent['id']}  {agent['name']}{status}  v{agent.get('version') or '?'}  {agent['cardUrl']}\n    tags: {tags or '-'}"


def _show_registered(result: dict[str, Any]) -> None:
    """A registration: the agent, and for a domain with an ARD manifest what the manifest listed."""
    if "id" in result:
        click.echo("Registered:")
        _show_agent(result)
    if "manifest" in result:
        _show_manifest(result["manifest"], result.get("domainCard"))


FOUND_VIA = {
    "well-known": "/.well-known/ard.json",
    "well-known-legacy": "/.well-known/ai-catalog.json",
    "agentmap": "robots.txt Agentmap",
    "link": "a link on the home page",
}


def _show_manifest(report: dict[str, Any], domain_card: dict[str, Any] | None) -> None:
    if domain_card is not None:
        click.echo(f"Domain card: {domain_card['outcome']} ({domain_card['message']})")
    click.echo(f"ARD manifest {report['url']} (found via {FOUND_VIA.get(report['foundVia'], report['foundVia'])}):")
    nested = f", {report['catalogs']} nested catalog(s)" if report["catalogs"] else ""
    click.echo(f"  listed {report['listed']} A2A agent(s){nested}; {report['ignored']} other entries ignored")
    counts = [(key, len(report[key])) for key in ("registered", "updated", "linked", "deprecated", "reactivated")]
    counts += [("unchanged", report["unchanged"]), ("refused", len(report["refused"]))]
    click.echo("  " + ", ".join(f"{key} {count}" for key, count in counts if count or key == "registered"))
    changed = [(what, item["id"], item["identifier"]) for what, _ in counts[:5] for item in report[what]]
    if changed:
        table(("  WHAT", "AGENT", "IDENTIFIER"), [(f"  {what}", *rest) for what, *rest in changed])
    if report["refused"]:
        table(
            ("  REFUSED", "RULE", "WHY"), [(f"  {r['identifier']}", r["rule"], r["message"]) for r in report["refused"]]
        )
    if not report["complete"]:
        click.echo("  (not every catalog could be read: nothing was taken as removed)")


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
    """Register an agent by its URL, or every agent a domain lists.

    URL is the agent's base URL (its card is looked for at /.well-known/agent-card.json, then
    /.well-known/agent.json) or the URL of its card. For a domain (https://example.com) the
    registry also looks for its ARD manifest (/.well-known/ard.json, /.well-known/ai-catalog.json,
    robots.txt Agentmap, a rel="ard" link on its home page), registers every A2A agent it lists,
    prints what was listed, registered and refused (with the rule each entry broke), and keeps
    following the manifest: new entries are registered, removed ones deprecated.

    \b
    Example:
      agentdex register https://weather.example.com --token adx_...
      agentdex register https://example.com --json     (a domain and its ARD manifest)
    """
    body = {"url": url, **({"jwksUrl": jwks_url} if jwks_url else {})}
    result = make_client(registry, token).call("POST", "/v1/agents", json=body)
    emit(result, as_json, _show_registered)


@click.group(invoke_without_command=True)
@click.option("--tag", "tags", multiple=True, help="Skill tag; repeatable (all must match).")
@click.option("--any", "match_any", is_flag=True, help="Match any of the tags instead of all.")
@click.option("--text", default=None, help="What you are looking for, in words: results come best first.")
@click.option(
    "--ranking",
    default=None,
    type=click.Choice(["fused", "lexical", "semantic"]),
    help="With --text: words and meaning (fused, the default), words only, or meaning only.",
)
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
@click.pass_context
@reports_errors
def search(
    ctx: click.Context,
    tags: tuple[str, ...],
    match_any: bool,
    text: str | None,
    ranking: str | None,
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
    """Find agents by tags, text, modes and capabilities.

    With --text, agents come best first: by the words they share with the text (stemmed, names
    and tags weighing most) and by meaning, each with its score. Without it, in registration
    order. Shows active agents only, unless --status says otherwise, and hides agents that have
    been down for long unless --include-dead is given.

    \b
    Examples:
      agentdex search --tag weather --tag forecast
      agentdex search --text "convert 100 euros to yen" --verified --health up
      agentdex search reindex     (on the registry's host: rebuild the search index)
    """
    if ctx.invoked_subcommand is not None:
        return
    if verified and signature not in (None, "verified"):
        raise CliError("--verified and --signature contradict each other", ExitCode.USAGE)
    params: dict[str, Any] = {
        "tag": list(tags),
        "q": text,
        "ranking": ranking,
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
    page = make_client(registry).call("GET", "/v1/agents", params=given(**params))

    def human(p: dict[str, Any]) -> None:
        for agent in p["items"]:
            relevance = agent.get("relevance")
            click.echo((f"{relevance['score']:.2f}  " if relevance else "") + _agent_line(agent))
        click.echo(
            f"{len(p['items'])} agent(s)" + (f"; more with --cursor {p['nextCursor']}" if p["nextCursor"] else "")
        )
        if p.get("suggestedTags"):
            click.echo("Nothing close enough. Tags near it: " + ", ".join(p["suggestedTags"]))

    emit(page, as_json, human)


@click.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@json_option
@reports_errors
def show(agent_id: str, registry: str, as_json: bool) -> None:
    """Show one agent.

    Prints its card's summary, status, signature state and health. ID is the agent's id, or
    its first 8 characters or more.

    \b
    Example:
      agentdex show 5b0c1d2e
    """
    emit(make_client(registry).call("GET", f"/v1/agents/{segment(agent_id)}"), as_json, _show_agent)


@click.command()
@click.argument("agent_id", metavar="ID")
@click.option("--message", default=None, help="Why, and what to use instead.")
@registry_option
@token_option
@json_option
@reports_errors
def deprecate(agent_id: str, message: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """Hide an agent from default search.

    The agent is marked deprecated: still readable by its ID and found with --status
    deprecated. Undo with `agentdex undeprecate`.

    \b
    Example:
      agentdex deprecate 5b0c1d2e --message "use the v2 agent, 9f3e…"
    """
    body = {"status": "deprecated", **({"statusMessage": message} if message else {})}
    agent = make_client(registry, token).call("PATCH", f"/v1/agents/{segment(agent_id)}", json=body)
    emit(agent, as_json, lambda a: click.echo(f"{a['id']} is now {a['status']}"))


@click.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@token_option
@json_option
@reports_errors
def undeprecate(agent_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Make a deprecated agent active again.

    It is back in default search, and its status message is cleared."""
    body = {"status": "active", "statusMessage": ""}
    agent = make_client(registry, token).call("PATCH", f"/v1/agents/{segment(agent_id)}", json=body)
    emit(agent, as_json, lambda a: click.echo(f"{a['id']} is {a['status']} again"))


@click.command()
@click.argument("agent_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@registry_option
@token_option
@json_option
@reports_errors
def delete(agent_id: str, yes: bool, registry: str, token: str | None, as_json: bool) -> None:
    """Remove an agent and its card history.

    The audit log keeps the fact. Asks first, unless --yes is given. To hide an agent but keep
    it, use `agentdex deprecate`."""
    client = make_client(registry, token)
    agent = client.call("GET", f"/v1/agents/{segment(agent_id)}")  # the whole id, and a name to confirm
    question = f"Delete agent {agent['name']} ({agent['id']}) and its history?"
    if not yes and not click.confirm(question, default=False, err=True):
        raise CliError("not deleted", ExitCode.FAILED)
    client.call("DELETE", f"/v1/agents/{segment(agent['id'])}")
    emit({"deleted": agent["id"]}, as_json, lambda d: click.echo(f"deleted {d['deleted']}"))


@click.command("import")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--batch", default=500, show_default=True, type=click.IntRange(1, 1000), help="Cards per request.")
@click.option("--parallel", default=2, show_default=True, type=click.IntRange(1, 16), help="Requests in flight.")
@registry_option
@token_option
@json_option
@reports_errors
def import_(path: Path, batch: int, parallel: int, registry: str, token: str | None, as_json: bool) -> None:
    """Register many cards from a JSON Lines file.

    One {"card": {...}, "cardUrl": "..."} per line, with "jwksUrl": "..." where the agent
    publishes the keys that verify its card. Exits 1 when any line failed; each failure is
    reported with its line number.

    \b
    Example:
      agentdex import cards.jsonl --batch 500 --parallel 4
    """
    from cli.importer import import_file

    summary = import_file(lambda: make_client(registry, token), path, batch, progress=not as_json, parallel=parallel)
    emit(summary, as_json, lambda s: click.echo(f"created {s['created']}, failed {s['failed']}"))
    result_printed()  # the summary lists the failures: stdout stays that one JSON document
    if summary["failed"]:
        raise CliError(f"{summary['failed']} card(s) were not imported", ExitCode.FAILED)


@click.command()
@click.option("--prefix", default=None, help="Only tags that start with this (case-insensitive).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000), help="How many tags.")
@registry_option
@json_option
@reports_errors
def tags(prefix: str | None, limit: int, registry: str, as_json: bool) -> None:
    """List skill tags with how many agents carry each.

    Counts active agents; the most used tags come first.

    \b
    Example:
      agentdex tags --prefix wea
    """
    page = make_client(registry).call("GET", "/v1/tags", params=given(limit=limit, prefix=prefix))
    emit(page, as_json, _tag_table)


def _tag_table(page: dict[str, Any]) -> None:
    if page["items"]:
        table(("AGENTS", "TAG"), [(item["count"], item["tag"]) for item in page["items"]])
    else:
        click.echo("no tags (only active agents' tags are counted)")
