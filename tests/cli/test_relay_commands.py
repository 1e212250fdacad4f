"""`agentdex relay subscribe|list|messages|replay|rotate|delete` against a real registry on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
import requests
from click.testing import CliRunner
from werkzeug.serving import make_server

from cli.main import cli
from registry.app import create_app
from registry.relay.job import RelayDeliveryJob
from tests.support.cards import make_card
from tests.support.jobs import run_job
from tests.support.webhooks import WebhookReceiver


@pytest.fixture
def registry_url(services) -> Iterator[str]:  # type: ignore[no-untyped-def]
    server = make_server("127.0.0.1", 0, create_app(services=services), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    server = WebhookReceiver()
    yield server
    server.close()


@pytest.fixture
def relay_token(services) -> str:  # type: ignore[no-untyped-def]
    return services.tokens.create("client", ["relay"]).token


@pytest.fixture
def agent_id(client, auth) -> str:  # type: ignore[no-untyped-def]
    card = make_card("Pusher", url="https://push.example.com/a2a", push=True)
    body = {"card": card, "cardUrl": "https://push.example.com/.well-known/agent-card.json"}
    return str(client.post("/v1/agents", json=body, headers=auth).json["id"])


def run(*args: str, url: str, token: str | None = None):  # type: ignore[no-untyped-def]
    env = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {})}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def _deliver(services) -> None:  # type: ignore[no-untyped-def]
    """One worker run of the delivery job, with no dispatcher thread left behind."""
    run_job(RelayDeliveryJob(1.0, services.relay.outbox, services.relay.wakeup, batch=8, dispatcher=False))


def test_subscribe_push_list_messages_and_replay(services, registry_url, relay_token, agent_id, receiver):
    made = run(
        "relay",
        "subscribe",
        agent_id,
        "--target",
        receiver.url,
        "--target-token",
        "mine",
        "--json",
        url=registry_url,
        token=relay_token,
    )
    assert made.exit_code == 0, made.output
    sub = json.loads(made.output)
    human = run("relay", "subscribe", agent_id, "--target", receiver.url, url=registry_url, token=relay_token)
    assert "token: adxr_" in human.output and "/relay/sub_" in human.output

    pushed = requests.post(
        sub["relayUrl"],
        json={"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}},
        headers={"X-A2A-Notification-Token": sub["relayToken"]},
        timeout=10,
    )
    assert pushed.status_code == 202
    _deliver(services)
    assert receiver.received[0].headers["x-a2a-notification-token"] == "mine"

    listed = run("relay", "list", url=registry_url, token=relay_token)
    assert listed.exit_code == 0 and sub["id"] in listed.output
    shown = run("relay", "messages", sub["id"], "--state", "delivered", url=registry_url, token=relay_token)
    assert shown.exit_code == 0 and pushed.json()["id"] in shown.output and "delivered" in shown.output

    replayed = run("relay", "replay", pushed.json()["id"], url=registry_url, token=relay_token)
    assert replayed.exit_code == 0 and "pending" in replayed.output
    _deliver(services)
    assert [r.webhook_id for r in receiver.received] == [pushed.json()["id"]] * 2

    bulk = run(
        "relay",
        "replay",
        "--subscription",
        sub["id"],
        "--since",
        "2020-01-01T00:00:00Z",
        url=registry_url,
        token=relay_token,
    )
    assert bulk.exit_code == 0 and "0 dead-lettered" in bulk.output


def test_rotate_delete_and_errors(registry_url, relay_token, agent_id, receiver):
    sub = json.loads(
        run(
            "relay", "subscribe", agent_id, "--target", receiver.url, "--json", url=registry_url, token=relay_token
        ).output
    )
    rotated = run("relay", "rotate", sub["id"], url=registry_url, token=relay_token)
    assert rotated.exit_code == 0 and "old token valid until" in rotated.output
    assert run("relay", "delete", sub["id"], "--yes", url=registry_url, token=relay_token).exit_code == 0
    missing = run("relay", "messages", sub["id"], url=registry_url, token=relay_token)
    assert missing.exit_code == 1 and "HTTP 404" in missing.output
    assert run("relay", "replay", url=registry_url, token=relay_token).exit_code == 2
    refused = run(
        "relay", "subscribe", agent_id, "--target", "http://10.0.0.1/hook", url=registry_url, token=relay_token
    )
    assert refused.exit_code == 1 and "target_refused" in refused.output
    assert run("relay", "list", url="http://127.0.0.1:9", token=relay_token).exit_code == 4


def test_subscribe_takes_an_agent_id_prefix_and_delete_asks_first(registry_url, relay_token, agent_id, receiver):
    made = run(
        "relay", "subscribe", agent_id[:8], "--target", receiver.url, "--json", url=registry_url, token=relay_token
    )
    assert made.exit_code == 0, made.output
    sub = json.loads(made.output)
    assert sub["agentId"] == agent_id

    kept = CliRunner().invoke(
        cli,
        ["relay", "delete", sub["id"]],
        env={"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": relay_token},
        input="n\n",
    )
    assert (
        kept.exit_code == 1 and f"Delete subscription {sub['id']} (agent {agent_id} -> {receiver.url})?" in kept.output
    )
    assert sub["id"] in run("relay", "list", url=registry_url, token=relay_token).output

    deleted = CliRunner().invoke(
        cli,
        ["relay", "delete", sub["id"], "--json"],
        env={"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": relay_token},
        input="y\n",
    )
    assert deleted.exit_code == 0, deleted.output
    assert json.loads(deleted.stdout) == {"deleted": sub["id"]}
    assert sub["id"] not in run("relay", "list", url=registry_url, token=relay_token).output
