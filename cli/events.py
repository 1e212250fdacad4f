"""`agentdex events …`: follow the catalog's changes with a webhook, over the registry's API.

Any token will do (`--token` or AGENTDEX_TOKEN). Deliveries are CloudEvents 1.0 (structured JSON),
signed as relayed push notifications are (Standard Webhooks `v1a`, the registry's JWKS); their log
and replays reuse `agentdex relay`'s presentation. Exit codes as everywhere (`cli.exits`).
"""

from __future__ import annotations

from typing import Any

import click

from cli.client import given, json_option, make_client, registry_option, segment, token_option
from cli.exits import CliError, ExitCode, reports_errors
from cli.output import emit, page_lines
from cli.relay import message_line, message_lines

TYPES = ("registered", "updated", "deprecated", "deleted", "health_changed", "signature_changed")


@click.group()
def events() -> None:
    """Subscribe a webhook to the catalog's change events.

    \b
    Example:
      agentdex events subscribe https://me.example/hook --type registered --type deleted --tag weather
    """


def _subscription_lines(sub: dict[str, Any]) -> None:
    kinds = ", ".join(t.rsplit(".", 1)[-1] for t in sub["types"])
    shown = [f"tags {', '.join(sub['filter']['tags'])}"] if sub["filter"]["tags"] else []
    shown += [f"owner {sub['filter']['owner']}"] if sub["filter"].get("owner") else []
    status = "" if sub["status"] == "active" else f" [{sub['status']}: {sub.get('statusReason') or ''}]"
    click.echo(f"{sub['id']}  {kinds}  ({'; '.join(shown) or 'every agent'}){status}")
    click.echo(f"    ->  {sub['targetUrl']}")


@events.command("subscribe")
@click.argument("target_url", metavar="URL")
@click.option("--type", "types", multiple=True, required=True, type=click.Choice(TYPES), help="Repeatable.")
@click.option("--tag", "tags", multiple=True, help="Only agents with this skill tag (any of those given).")
@click.option("--owner", default=None, help="Only agents of this principal.")
@click.option("--target-token", default=None, help="Sent to your webhook as X-A2A-Notification-Token.")
@click.option("--target-authorization", default=None, help="Sent to your webhook as Authorization (e.g. 'Bearer …').")
@registry_option
@token_option
@json_option
@reports_errors
def subscribe(
    target_url: str,
    types: tuple[str, ...],
    tags: tuple[str, ...],
    owner: str | None,
    target_token: str | None,
    target_authorization: str | None,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """Send the catalog's changes to the webhook at URL.

    Prints the subscription and how to verify each delivery: the Standard Webhooks headers are
    signed (v1a) with the registry's Ed25519 key, published in its JWKS.
    """
    body: dict[str, Any] = {"targetUrl": target_url, "types": list(types)}
    body["filter"] = {"tags": list(tags), **given(owner=owner)}
    body |= given(targetToken=target_token, targetAuthorization=target_authorization)
    sub = make_client(registry, token).call("POST", "/v1/events/subscriptions", json=body)

    def human(s: dict[str, Any]) -> None:
        _subscription_lines(s)
        signing = s["signing"]
        click.echo(f"Deliveries are signed ({signing['scheme']}) by key {signing['kid']}: {signing['publicKey']}")
        click.echo(f"  (the registry's keys: {signing['jwksUrl']})")

    emit(sub, as_json, human)


@events.command("list")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200))
@click.option("--cursor", default=None, help="Continue from a previous page.")
@registry_option
@token_option
@json_option
@reports_errors
def list_(limit: int, cursor: str | None, registry: str, token: str | None, as_json: bool) -> None:
    """List your event subscriptions, newest first."""
    params = given(limit=limit, cursor=cursor)
    page = make_client(registry, token).call("GET", "/v1/events/subscriptions", params=params)
    emit(page, as_json, lambda p: page_lines(p, _subscription_lines))


@events.command("messages")
@click.argument("subscription_id")
@click.option("--state", default=None, type=click.Choice(("pending", "delivered", "dead")))
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
    """List a subscription's deliveries, newest first, with their state and attempts."""
    params = given(limit=limit, state=state, cursor=cursor)
    path = f"/v1/events/subscriptions/{segment(subscription_id)}/messages"
    page = make_client(registry, token).call("GET", path, params=params)
    emit(page, as_json, lambda p: message_lines({"items": [{**m, "taskId": m["agentId"]} for m in p["items"]]}))


@events.command("replay")
@click.argument("subscription_id")
@click.option("--since", default=None, help="ISO 8601 time: every delivery dead-lettered at or after it.")
@click.option("--message", "message_id", default=None, help="One delivery (delivered or dead), by its id.")
@registry_option
@token_option
@json_option
@reports_errors
def replay(
    subscription_id: str, since: str | None, message_id: str | None, registry: str, token: str | None, as_json: bool
) -> None:
    """Deliver a subscription's events again (same event id, same webhook-id).

    \b
    Examples:
      agentdex events replay evs_... --since 2026-01-31T00:00:00Z
      agentdex events replay evs_... --message msg_...
    \f
    Raises CliError (exit 2) unless exactly one of --since and --message is given.
    """
    client = make_client(registry, token)
    if since and not message_id:
        path = f"/v1/events/subscriptions/{segment(subscription_id)}/replay"
        result = client.call("POST", path, json={"since": since})
        emit(result, as_json, lambda r: click.echo(f"{r['replayed']} dead-lettered event(s) queued again"))
    elif message_id and not since:
        path = f"/v1/events/subscriptions/{segment(subscription_id)}/messages/{segment(message_id)}/replay"
        message = client.call("POST", path)
        emit(message, as_json, lambda m: click.echo(message_line({**m, "taskId": m["agentId"]})))
    else:
        raise CliError("give --since or --message (one of them)", ExitCode.USAGE)


@events.command("delete")
@click.argument("subscription_id")
@registry_option
@token_option
@json_option
@reports_errors
def delete(subscription_id: str, registry: str, token: str | None, as_json: bool) -> None:
    """Unsubscribe: no more events; undelivered ones are dead-lettered."""
    make_client(registry, token).call("DELETE", f"/v1/events/subscriptions/{segment(subscription_id)}")
    emit({"deleted": subscription_id}, as_json, lambda d: click.echo(f"deleted {d['deleted']}"))
