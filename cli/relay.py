"""`agentdex relay …`: push-relay subscriptions and their delivery log, over the registry's API.

All commands need a token with the `relay` scope (`--token` or AGENTDEX_TOKEN). Exit codes as
everywhere (`cli.exits`): 1 when the registry refuses, 4 when it cannot be reached.
"""

from __future__ import annotations

import json
from typing import Any

import click

from cli.client import json_option, make_client, registry_option, token_option
from cli.exits import CliError, ExitCode, reports_errors

STATES = ("pending", "delivered", "dead")


@click.group()
def relay() -> None:
    """Relay an agent's push notifications to your webhook (subscriptions, deliveries, replays)."""


def _emit(payload: Any, as_json: bool, human: Any) -> None:
    if as_json:
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        human(payload)


def _subscription_lines(sub: dict[str, Any]) -> None:
    task = f" task {sub['taskId']}" if sub.get("taskId") else " (any task)"
    status = "" if sub["status"] == "active" else f" [{sub['status']}: {sub.get('statusReason') or ''}]"
    click.echo(f"{sub['id']}  agent {sub['agentId']}{task}  auth {sub['authMode']}{status}")
    click.echo(f"    {sub['relayUrl']}  ->  {sub['targetUrl']}")


def _message_lines(page: dict[str, Any]) -> None:
    for message in page["items"]:
        click.echo(_message_line(message))


def _message_line(message: dict[str, Any]) -> str:
    status = f"HTTP {message['lastStatus']}" if message.get("lastStatus") else (message.get("lastError") or "-")
    when = message.get("nextAttemptAt") if message["state"] == "pending" else message.get("finishedAt")
    return (
        f"{message['id']}  {message['state']:<9} task {message.get('taskId') or '-'} #{message['sequence']}  "
        f"{message['kind']:<14} attempts {message['attempts']}  {status}  {when or ''}"
    )


@relay.command("subscribe")
@click.argument("agent_id")
@click.option("--target", "target_url", required=True, help="Your webhook URL (where notifications are relayed).")
@click.option("--task", "task_id", default=None, help="Relay only this task's notifications.")
@click.option("--target-token", default=None, help="Sent to your webhook as X-A2A-Notification-Token.")
@click.option("--target-authorization", default=None, help="Sent to your webhook as Authorization (e.g. 'Bearer …').")
@click.option("--jwt", "jwt_mode", is_flag=True, help="Also require a JWT signed by a key bound to the agent's card.")
@registry_option
@token_option
@json_option
@reports_errors
def subscribe(
    agent_id: str,
    target_url: str,
    task_id: str | None,
    target_token: str | None,
    target_authorization: str | None,
    jwt_mode: bool,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """Create a subscription; prints the relay URL and the relay token (shown once) to give the agent."""
    body = {
        "agentId": agent_id,
        "targetUrl": target_url,
        "taskId": task_id,
        "targetToken": target_token,
        "targetAuthorization": target_authorization,
        "authMode": "jwt" if jwt_mode else "token",
    }
    sub = make_client(registry, token).call(
        "POST", "/v1/relay/subscriptions", json={k: v for k, v in body.items() if v is not None}
    )

    def human(s: dict[str, Any]) -> None:
        _subscription_lines(s)
        click.echo("Give the agent this push notification config (the token is shown only now):")
        click.echo(f"  url:   {s['relayUrl']}\n  token: {s['relayToken']}")

    _emit(sub, as_json, human)


@relay.command("list")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200))
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@token_option
@json_option
@reports_errors
def list_(limit: int, cursor: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """Your subscriptions, newest first."""
    params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
    page = make_client(registry, token).call("GET", "/v1/relay/subscriptions", params=params)

    def human(p: dict[str, Any]) -> None:
        for sub in p["items"]:
            _subscription_lines(sub)
        if p.get("nextCursor"):
            click.echo(f"more: --cursor {p['nextCursor']}")

    _emit(page, as_json, human)


@relay.command("messages")
@click.argument("subscription_id")
@click.option("--state", default=None, type=click.Choice(STATES), help="Only messages in this state.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@token_option
@json_option
@reports_errors
def messages(
    subscription_id: str,
    state: str | None,
    limit: int,
    cursor: str | None,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """A subscription's relayed messages, newest first, with their delivery state."""
    params = {"limit": limit, **({"state": state} if state else {}), **({"cursor": cursor} if cursor else {})}
    page = make_client(registry, token).call(
        "GET", f"/v1/relay/subscriptions/{subscription_id}/messages", params=params
    )
    _emit(page, as_json, _message_lines)


@relay.command("replay")
@click.argument("message_id", required=False)
@click.option("--subscription", "subscription_id", default=None, help="With --since: replay its dead letters.")
@click.option("--since", default=None, help="ISO 8601 time: dead-lettered at or after it (with --subscription).")
@registry_option
@token_option
@json_option
@reports_errors
def replay(
    message_id: str | None,
    subscription_id: str | None,
    since: str | None,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """Deliver MESSAGE_ID again, or every dead letter of --subscription since --since.

    Raises CliError (exit 2) when neither or both forms are given.
    """
    client = make_client(registry, token)
    if message_id and not (subscription_id or since):
        message = client.call("POST", f"/v1/relay/messages/{message_id}/replay")
        _emit(message, as_json, lambda m: click.echo(_message_line(m)))
    elif subscription_id and since and not message_id:
        result = client.call("POST", f"/v1/relay/subscriptions/{subscription_id}/replay", json={"since": since})
        _emit(result, as_json, lambda r: click.echo(f"{r['replayed']} dead-lettered message(s) queued again"))
    else:
        raise CliError("give a MESSAGE_ID, or --subscription and --since (not both)", ExitCode.USAGE)


@relay.command("rotate")
@click.argument("subscription_id")
@registry_option
@token_option
@json_option
@reports_errors
def rotate(subscription_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """A new relay token; the old one keeps working for the grace period (AGENTDEX_RELAY_TOKEN_GRACE)."""
    sub = make_client(registry, token).call("POST", f"/v1/relay/subscriptions/{subscription_id}/rotate")
    _emit(
        sub,
        as_json,
        lambda s: click.echo(f"token: {s['relayToken']}\nold token valid until {s['previousTokenValidUntil']}"),
    )


@relay.command("delete")
@click.argument("subscription_id")
@registry_option
@token_option
@reports_errors
def delete(subscription_id: str, registry: str, token: str | None) -> None:
    """Stop relaying: the relay URL stops answering and undelivered messages are dead-lettered."""
    make_client(registry, token).call("DELETE", f"/v1/relay/subscriptions/{subscription_id}")
    click.echo(f"deleted {subscription_id}")
