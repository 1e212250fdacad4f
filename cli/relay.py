"""`agentdex relay …`: push-relay subscriptions and their delivery log, over the registry's API.
Subscription ids are taken whole (they are also the relay URL's last segment); an agent's id may
be a prefix, resolved by the registry before subscribing.

All commands need a token with the `relay` scope (`--token` or AGENTDEX_TOKEN). Exit codes as
everywhere (`cli.exits`): 1 when the registry refuses, 4 when it cannot be reached.
"""

from __future__ import annotations

from typing import Any

import click

from cli.client import given, json_option, make_client, registry_option, segment, token_option
from cli.exits import CliError, ExitCode, reports_errors
from cli.output import emit, page_lines

STATES = ("pending", "delivered", "dead")


@click.group()
def relay() -> None:
    """Relay an agent's push notifications to your webhook.

    Subscriptions, their delivery log, replays. Every command needs a token with the `relay`
    scope (--token or AGENTDEX_TOKEN).

    \b
    Example:
      agentdex relay subscribe 5b0c1d2e --target https://me.example/hook --target-token s3cret
    """


def _subscription_lines(sub: dict[str, Any]) -> None:
    task = f" task {sub['taskId']}" if sub.get("taskId") else " (any task)"
    status = "" if sub["status"] == "active" else f" [{sub['status']}: {sub.get('statusReason') or ''}]"
    click.echo(f"{sub['id']}  agent {sub['agentId']}{task}  auth {sub['authMode']}{status}")
    click.echo(f"    {sub['relayUrl']}  ->  {sub['targetUrl']}")


def message_lines(page: dict[str, Any]) -> None:
    """A page of the delivery log, a line for each message (`agentdex events` prints its own so)."""
    for message in page["items"]:
        click.echo(message_line(message))


def message_line(message: dict[str, Any]) -> str:
    """One message of the delivery log: state, task, sequence, kind, attempts, last answer, when."""
    status = f"HTTP {message['lastStatus']}" if message.get("lastStatus") else (message.get("lastError") or "-")
    when = message.get("nextAttemptAt") if message["state"] == "pending" else message.get("finishedAt")
    return (
        f"{message['id']}  {message['state']:<9} task {message.get('taskId') or '-'} #{message['sequence']}  "
        f"{message['kind']:<14} attempts {message['attempts']}  {status}  {when or ''}"
    )


@relay.command("subscribe")
@click.argument("agent_id", metavar="AGENT_ID")
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
    """Subscribe to an agent's push notifications.

    Prints the relay URL and the relay token (shown once) to give the agent as its push
    notification config; the relay forwards what the agent sends to --target. AGENT_ID may be
    a prefix of 8 characters or more.
    """
    client = make_client(registry, token)
    body = {
        "agentId": client.call("GET", f"/v1/agents/{segment(agent_id)}")["id"],  # a prefix resolved
        "targetUrl": target_url,
        "taskId": task_id,
        "targetToken": target_token,
        "targetAuthorization": target_authorization,
        "authMode": "jwt" if jwt_mode else "token",
    }
    sub = client.call("POST", "/v1/relay/subscriptions", json={k: v for k, v in body.items() if v is not None})

    def human(s: dict[str, Any]) -> None:
        _subscription_lines(s)
        click.echo("Give the agent this push notification config (the token is shown only now):")
        click.echo(f"  url:   {s['relayUrl']}\n  token: {s['relayToken']}")

    emit(sub, as_json, human)


@relay.command("list")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200))
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@token_option
@json_option
@reports_errors
def list_(limit: int, cursor: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """List your subscriptions, newest first."""
    params = given(limit=limit, cursor=cursor)
    page = make_client(registry, token).call("GET", "/v1/relay/subscriptions", params=params)
    emit(page, as_json, lambda p: page_lines(p, _subscription_lines))


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
    """List a subscription's relayed messages.

    Newest first, with their delivery state (pending, delivered, dead), attempts and the
    target's last answer."""
    params = given(limit=limit, state=state, cursor=cursor)
    page = make_client(registry, token).call(
        "GET", f"/v1/relay/subscriptions/{segment(subscription_id)}/messages", params=params
    )
    emit(page, as_json, message_lines)


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
    """Deliver relayed messages again.

    Give MESSAGE_ID to deliver one message again (with the same webhook-id), or --subscription
    and --since to queue every message of that subscription dead-lettered since then.

    \b
    Examples:
      agentdex relay replay msg_...
      agentdex relay replay --subscription sub_... --since 2026-01-31T00:00:00Z
    \f
    Raises CliError (exit 2) when neither or both forms are given.
    """
    client = make_client(registry, token)
    if message_id and not (subscription_id or since):
        message = client.call("POST", f"/v1/relay/messages/{segment(message_id)}/replay")
        emit(message, as_json, lambda m: click.echo(message_line(m)))
    elif subscription_id and since and not message_id:
        result = client.call(
            "POST", f"/v1/relay/subscriptions/{segment(subscription_id)}/replay", json={"since": since}
        )
        emit(result, as_json, lambda r: click.echo(f"{r['replayed']} dead-lettered message(s) queued again"))
    else:
        raise CliError("give a MESSAGE_ID, or --subscription and --since (not both)", ExitCode.USAGE)


@relay.command("rotate")
@click.argument("subscription_id")
@registry_option
@token_option
@json_option
@reports_errors
def rotate(subscription_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Issue a new relay token for a subscription.

    The token is shown once: give it to the agent. The old one keeps working for the grace
    period (AGENTDEX_RELAY_TOKEN_GRACE on the registry)."""
    sub = make_client(registry, token).call("POST", f"/v1/relay/subscriptions/{segment(subscription_id)}/rotate")
    emit(
        sub,
        as_json,
        lambda s: click.echo(f"token: {s['relayToken']}\nold token valid until {s['previousTokenValidUntil']}"),
    )


@relay.command("delete")
@click.argument("subscription_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@registry_option
@token_option
@json_option
@reports_errors
def delete(subscription_id: str, yes: bool, registry: str, token: str | None, as_json: bool) -> None:
    """Stop relaying and delete a subscription.

    The relay URL stops answering and undelivered messages are dead-lettered. Asks first,
    unless --yes is given."""
    client = make_client(registry, token)
    if not yes:
        sub = client.call("GET", f"/v1/relay/subscriptions/{segment(subscription_id)}")
        question = f"Delete subscription {sub['id']} (agent {sub['agentId']} -> {sub['targetUrl']})?"
        if not click.confirm(question, default=False, err=True):
            raise CliError("not deleted", ExitCode.FAILED)
    client.call("DELETE", f"/v1/relay/subscriptions/{segment(subscription_id)}")
    emit({"deleted": subscription_id}, as_json, lambda d: click.echo(f"deleted {d['deleted']}"))
