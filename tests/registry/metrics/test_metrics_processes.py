"""Metrics across real processes: the README's scaled-out shape (granian with two web processes,
and an `agentdex worker`) on one database and one AGENTDEX_METRICS_DIR. Work done in each web
process and in the worker shows, summed, in /metrics of either web process."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.support.a2a_agents import PlainAgent
from tests.support.agentdex_processes import BIN, AgentdexProcess, free_port, user_env
from tests.support.cards import make_card
from tests.support.waiting import wait_for
from tests.support.webhooks import WebhookReceiver

WORKER_HEADER = "Agentdex-Worker"  # names the web process that answered (registry.api.service)


@pytest.fixture
def env(services: Any, database_url: str, tmp_path: Path) -> dict[str, str]:
    """The settings every process gets; `services` cleared the database first."""
    return user_env(
        AGENTDEX_DATABASE_URL=database_url,
        AGENTDEX_SECRET_KEY=services.settings.secret_key,
        AGENTDEX_METRICS_DIR=str(tmp_path / "metrics"),
        AGENTDEX_ALLOW_HTTP="true",
        AGENTDEX_ALLOWED_NETWORKS="127.0.0.0/8",
        AGENTDEX_SEARCH_SEMANTIC="false",
        AGENTDEX_WORKER_TICK="0.5",
        AGENTDEX_RELAY_RETRY_SCHEDULE="0",
    )


@pytest.fixture
def web(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    command = [str(BIN / "granian"), "--interface", "wsgi", "--workers", "2", "--blocking-threads", "4"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log", "registry.wsgi:app"]
    with (tmp_path / "granian.log").open("w") as log:
        server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def worker(env: dict[str, str], tmp_path: Path) -> Iterator[AgentdexProcess]:
    with AgentdexProcess(
        "worker", "--job", "health-probe", "--job", "relay-delivery", cwd=tmp_path, env=env
    ) as process:
        yield process


def sessions_per_process(url: str) -> dict[str, requests.Session]:
    """A kept-alive connection to each of the two web processes (new connections until both answered)."""
    found: dict[str, requests.Session] = {}

    def reach_both() -> bool:
        session = requests.Session()
        try:
            name = session.get(url + "/healthz", timeout=2).headers[WORKER_HEADER]
        except requests.RequestException:
            return False
        found.setdefault(name, session)
        return len(found) == 2

    assert wait_for(reach_both, 60), f"two web processes did not answer: {list(found)}"
    return found


def scrape(session: requests.Session, url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = session.get(url + "/metrics", timeout=5).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_either_web_process_reports_the_sum_over_all_processes(services, web, worker):
    agent, receiver = PlainAgent(), WebhookReceiver()
    try:
        run_the_script(services, web, agent, receiver)
    finally:
        agent.stop()
        receiver.close()


def run_the_script(services: Any, url: str, agent: PlainAgent, receiver: WebhookReceiver) -> None:
    first, second = sessions_per_process(url).values()
    auth = {"Authorization": f"Bearer {services.tokens.create('alice', ['agents:write']).token}"}
    relay_auth = {"Authorization": f"Bearer {services.tokens.create('client', ['relay']).token}"}
    # One registration in each web process; the worker then probes the agent that has an endpoint.
    assert first.post(url + "/v1/agents", json={"url": agent.base_url}, headers=auth).status_code == 201
    card = make_card("Pusher", url="https://push.example.com/a2a", push=True)
    upload = {"card": card, "cardUrl": "https://push.example.com/card.json"}
    pusher = second.post(url + "/v1/agents", json=upload, headers=auth)
    assert pusher.status_code == 201, pusher.text
    sub = second.post(
        url + "/v1/relay/subscriptions",
        json={"agentId": pusher.json()["id"], "targetUrl": receiver.url},
        headers=relay_auth,
    ).json()
    note = {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}
    pushed = first.post(sub["relayUrl"], json=note, headers={"X-A2A-Notification-Token": sub["relayToken"]})
    assert pushed.status_code == 202, pushed.text
    assert len(receiver.wait_for(1, timeout=30)) == 1  # delivered by the worker

    def probed_and_delivered() -> bool:
        samples = scrape(first, url)
        return value(samples, "agentdex_probes_total", outcome="up") >= 1 and (
            value(samples, "agentdex_relay_messages_delivered_total") == 1
        )

    assert wait_for(probed_and_delivered, 30)
    for session in (first, second):
        samples = scrape(session, url)
        assert value(samples, "agentdex_registrations_total", outcome="created") == 2
        assert value(samples, "agentdex_http_requests_total", route="/v1/agents", method="POST", status="201") == 2
        assert value(samples, "agentdex_relay_messages_accepted_total") == 1
        assert value(samples, "agentdex_relay_messages_delivered_total") == 1
        assert value(samples, "agentdex_probes_total", outcome="up") >= 1  # the worker's, and on schedule
        assert value(samples, "agentdex_job_runs_total", job="relay-delivery", outcome="ok") >= 1
        assert value(samples, "agentdex_agents", status="active") == 2
        # Summed over the live processes' pools (the worker's relay watcher holds one on SQLite).
        assert ("agentdex_db_pool_connections_in_use", (("pool", "main"),)) in samples
