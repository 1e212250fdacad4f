"""`agentdex health ID` (recent checks) and `agentdex check ID` (probe now)."""

from __future__ import annotations

from typing import Any

import click

from cli.client import json_option, make_client, registry_option, segment, token_option
from cli.exits import CliError, ExitCode, reports_errors, result_printed


def _emit(payload: dict[str, Any], as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    health = payload["health"]
    uptime = health.get("uptime24h")
    click.echo(
        f"{payload['agentId']}: {health['state']}"
        + (f" since {health['since']}" if health.get("since") else "")
        + (f" ({health['reason']})" if health.get("reason") else "")
        + (f", uptime 24h {uptime * 100:.1f}%" if uptime is not None else "")
    )
    crawl = payload.get("crawl")
    if crawl and crawl.get("crawledAt"):
        error = f"; last error: {crawl['error']}" if crawl.get("error") else ""
        click.echo(f"  card re-fetched {crawl['crawledAt']}, next {crawl.get('nextCrawlAt') or '-'}{error}")
    for check in payload["items"]:
        latency = f"{check['latencyMs']} ms" if check.get("latencyMs") is not None else "-"
        code = f" rpc {check['rpcCode']}" if check.get("rpcCode") is not None else ""
        status = f" HTTP {check['httpStatus']}" if check.get("httpStatus") is not None else ""
        click.echo(
            f"  {check['checkedAt']}  {check['outcome']:<8} {check['reason']:<16} {latency:>8}"
            f"  {check['method']} {check['interfaceUrl']}{status}{code}"
        )


@click.command()
@click.argument("agent_id", metavar="ID")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 500), help="How many checks.")
@registry_option
@json_option
@reports_errors
def health(agent_id: str, limit: int, registry: str, as_json: bool) -> None:
    """Show an agent's health and its recent checks.

    Its state (up, degraded, down, unknown) and since when, uptime over 24 hours, when its card
    was last re-fetched, and its most recent probes.

    \b
    Example:
      agentdex health 5b0c1d2e --limit 5
    """
    _emit(make_client(registry).call("GET", f"/v1/agents/{segment(agent_id)}/health", params={"limit": limit}), as_json)


@click.command()
@click.argument("agent_id", metavar="ID")
@registry_option
@token_option
@json_option
@reports_errors
def check(agent_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Probe an agent's endpoints now.

    Calls its JSON-RPC endpoints as the scheduled checks do: a request for a task that cannot
    exist, so no work is created on the agent. Exits 1 when an endpoint is down.

    \b
    Example:
      agentdex check 5b0c1d2e --token adx_...
    """
    payload = make_client(registry, token).call("POST", f"/v1/agents/{segment(agent_id)}/check")
    _emit(payload, as_json)
    result_printed()  # the checks say what is down: stdout stays that one JSON document
    if any(item["outcome"] == "down" for item in payload["items"]):
        raise CliError("the agent did not answer like an A2A agent (see the checks above)", ExitCode.FAILED)
