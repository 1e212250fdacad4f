"""`agentdex audit`: the registry's audit log (who did what to which entry, when), over the API.
Any token (`--token` or AGENTDEX_TOKEN): an admin's reads every entry, another the entries about
its principal. Exit codes as everywhere (`cli.exits`): 1 when
the registry refuses, 2 for a bad option, 4 when it cannot be reached."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import click

from cli.client import json_option, make_client, registry_option, token_option
from cli.durations import duration
from cli.exits import CliError, ExitCode, reports_errors
from cli.output import emit, more, short_time, table


@click.command()
@click.option("--actor", default=None, help="Only what this principal did (a token owner's name).")
@click.option("--agent", default=None, help="Only entries about this agent (its id, or 8+ first characters).")
@click.option("--action", default=None, help="Only this action (agent.register), or a family (agent.*).")
@click.option("--since", default=None, help="From this time (2026-01-31T12:00:00Z) or this long ago (30m, 12h, 7d).")
@click.option("--until", default=None, help="Before this time, or this long ago.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500), help="Entries per page.")
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@token_option
@json_option
@reports_errors
def audit(
    actor: str | None,
    agent: str | None,
    action: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    cursor: str | None,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """Show the audit log: who registered, changed or deleted which agent, revoked which token.

    Oldest first; a page ends with the --cursor that continues it. With an admin token: every
    entry. With any other token: the entries about you, where you acted or are the subject (an
    agent claimed from you, a domain of yours taken over or lapsed, your entry approved or
    rejected in review; the DETAIL names the previous and the new owner).

    \b
    Examples:
      agentdex audit --since 24h
      agentdex audit --agent 5b0c1d2e --json
      agentdex audit --actor ci-publisher --action 'agent.*'
      agentdex audit --action agent.claim

    \f
    Raises CliError: exit 2 for a --since/--until that is neither a time nor an age.
    """
    now = dt.datetime.now(dt.UTC)
    filters = {"actor": actor, "agent": agent, "action": action, "cursor": cursor}
    filters |= {"since": as_time(since, now, "--since"), "until": as_time(until, now, "--until")}
    params = {"limit": limit, **{name: value for name, value in filters.items() if value is not None}}
    page = make_client(registry, token).call("GET", "/v1/audit", params=params)
    emit(page, as_json, _print_page)


def as_time(value: str | None, now: dt.datetime, option: str) -> str | None:
    """An age (`30m`, `12h`, `7d`) as the time that long before `now`; a time as given (the
    registry checks it). Raises CliError (exit 2) for an age it cannot read."""
    if value is None:
        return None
    try:
        age = duration(value)
        then = None if age is None else now - age
    except OverflowError:
        raise CliError(f"{option} {value!r} is too long ago", ExitCode.USAGE) from None
    if then is not None:
        return then.isoformat().replace("+00:00", "Z")
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        message = f"{option} {value!r} is neither a time (2026-01-31T12:00:00Z) nor an age (30m, 12h, 7d)"
        raise CliError(message, ExitCode.USAGE) from None
    return value


def _print_page(page: dict[str, Any]) -> None:
    if not page["items"]:
        click.echo("no audit entries")
    else:
        rows = [
            (
                entry["id"],
                short_time(entry["at"]),
                entry["actor"] or "(registry)",
                entry["action"],
                entry["agentId"],
                json.dumps(entry["detail"], ensure_ascii=False) if entry["detail"] else "",
            )
            for entry in page["items"]
        ]
        table(("ID", "TIME (UTC)", "ACTOR", "ACTION", "AGENT", "DETAIL"), rows)
    more(page)
