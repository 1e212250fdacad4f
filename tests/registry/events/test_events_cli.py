"""`agentdex events subscribe|list|messages|replay|delete` against a real registry on loopback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import cli
from tests.registry.events.conftest import deliver, events_of, register


def run(*args: str, url: str, token: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(
        cli, list(args), env={"AGENTDEX_URL": url, "AGENTDEX_TOKEN": token}, catch_exceptions=False
    )


def test_subscribe_list_messages_replay_and_delete(services, client, auth, registry_url, receiver):
    token = services.tokens.create("follower", ["metrics:read"]).token
    made = run(
        "events", "subscribe", receiver.url, "--type", "registered", "--tag", "Weather", url=registry_url, token=token
    )
    assert made.exit_code == 0, made.output
    assert "registered  (tags weather)" in made.output and "whpk_" in made.output
    sub = json.loads(run("events", "list", "--json", url=registry_url, token=token).output)["items"][0]
    assert sub["types"] == ["io.agentdex.agent.registered"] and sub["targetUrl"] == receiver.url

    agent_id = register(client, auth, "Weather Agent", tags=["weather"])
    register(client, auth, "Finance Agent", tags=["finance"])
    deliver(services)
    (event,) = events_of(receiver, client.get("/.well-known/jwks.json").json)
    assert event.subject == agent_id

    listed = run("events", "messages", sub["id"], "--json", url=registry_url, token=token)
    (message,) = json.loads(listed.output)["items"]
    assert (message["agentId"], message["state"]) == (agent_id, "delivered")
    replayed = run("events", "replay", sub["id"], "--message", message["id"], url=registry_url, token=token)
    assert replayed.exit_code == 0 and message["id"] in replayed.output
    deliver(services)
    assert [r.webhook_id for r in receiver.received] == [message["id"]] * 2

    since = run("events", "replay", sub["id"], "--since", "2020-01-01T00:00:00Z", url=registry_url, token=token)
    assert since.exit_code == 0 and "0 dead-lettered event(s) queued again" in since.output
    assert run("events", "replay", sub["id"], url=registry_url, token=token).exit_code == 2
    assert run("events", "delete", sub["id"], url=registry_url, token=token).exit_code == 0
    assert json.loads(run("events", "list", "--json", url=registry_url, token=token).output)["items"] == []


def test_a_refused_subscription_exits_1_with_the_reason(services, registry_url):
    token = services.tokens.create("follower", ["metrics:read"]).token
    refused = run("events", "subscribe", "http://10.9.9.9/hook", "--type", "deleted", url=registry_url, token=token)
    assert refused.exit_code == 1 and "private" in refused.output + (refused.stderr if refused.stderr_bytes else "")
