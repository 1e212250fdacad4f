"""`agentdex check`, `agentdex health`, `agentdex search --health` and `agentdex worker --once`
end to end: a real registry on loopback, real agents on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from cli.main import cli
from tests.support.a2a_agents import PlainAgent, SdkAgent, raw
from tests.support.cards import make_card


@pytest.fixture
def agents(client, auth) -> Iterator[dict[str, str]]:  # type: ignore[no-untyped-def]
    live, broken = SdkAgent(), PlainAgent(raw(500, b"broken", "text/plain"))
    ids = {}
    for key, agent in (("live", live), ("broken", broken)):
        body = {
            "card": make_card(f"{key} agent", tags=["cli"], url=agent.rpc_url),
            "cardUrl": f"{agent.base_url}/card.json",
        }
        ids[key] = client.post("/v1/agents", json=body, headers=auth).json["id"]
    yield ids
    live.stop()
    broken.stop()
    assert live.messages == []


def run(*args: str, url: str, token: str | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    environment = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {}), **(env or {})}
    return CliRunner().invoke(cli, list(args), env=environment, catch_exceptions=False)


def test_check_and_health(registry_url, writer_token, agents):
    checked = run("check", agents["live"], url=registry_url, token=writer_token)
    assert checked.exit_code == 0, checked.output
    assert f"{agents['live']}: up" in checked.output and "GetTask" in checked.output and "rpc -32001" in checked.output

    broken = run("check", agents["broken"], "--json", url=registry_url, token=writer_token)
    assert broken.exit_code == 1
    assert json.loads(broken.output[: broken.output.rindex("}") + 1])["items"][0]["reason"] == "serverError"

    shown = run("health", agents["live"], url=registry_url)
    assert shown.exit_code == 0 and "uptime 24h 100.0%" in shown.output
    assert run("check", agents["live"], url=registry_url).exit_code == 1  # no token: 401


def test_search_by_health(registry_url, writer_token, agents):
    run("check", agents["live"], url=registry_url, token=writer_token)
    found = run("search", "--health", "up", "--json", url=registry_url)
    assert [a["id"] for a in json.loads(found.output)["items"]] == [agents["live"]]
    unknown = run("search", "--health", "unknown", "--tag", "cli", "--include-dead", "--json", url=registry_url)
    assert [a["id"] for a in json.loads(unknown.output)["items"]] == [agents["broken"]]


def test_worker_once_probes_everything_due(registry_url, agents, database_url):
    env = {
        "AGENTDEX_DATABASE_URL": database_url,
        "AGENTDEX_SECRET_KEY": "x" * 32,
        "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8",
        "AGENTDEX_ALLOW_HTTP": "true",
        "AGENTDEX_WORKER_THREADS": "2",
        "AGENTDEX_HEALTH_TIMEOUT": "1",
    }
    result = run("worker", "--once", "--json", "--job", "health-probe", url=registry_url, env=env)
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert (report["job"], report["claimed"], report["recorded"]) == ("health-probe", 2, 2)
    assert (
        json.loads(run("worker", "--once", "--json", "--job", "health-probe", url=registry_url, env=env).output)[0][
            "claimed"
        ]
        == 0
    )
    health = json.loads(run("health", agents["live"], "--json", url=registry_url).output)["health"]
    assert health["state"] == "up"
