"""Metrics across real processes: the README's scaled-out shape (granian with two web processes,
and an `agentdex worker`) on one database and one AGENTDEX_METRICS_DIR. Work done in each web
process and in the worker shows, summed, in /metrics of either web process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.registry.metrics.exposition import Samples, samples_of, value
from tests.support.a2a_agents import PlainAgent
from tests.support.agentdex_processes import AgentdexProcess, connection_per_process, granian, user_env
from tests.support.cards import make_card
from tests.support.waiting import wait_for
from tests.support.webhooks import WebhookReceiver


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
    with granian(tmp_path, env, blocking_threads=4) as url:
        yield url


@pytest.fixture
def worker(env: dict[str, str], tmp_path: Path) -> Iterator[AgentdexProcess]:
    with AgentdexProcess(
        "worker", "--job", "health-probe", "--job", "relay-delivery", cwd=tmp_path, env=env
    ) as process:
        yield process


def scrape(session: requests.Session, url: str) -> Samples:
    return samples_of(session.get(url + "/metrics", timeout=5).text)


def test_either_web_process_reports_the_sum_over_all_processes(services, web, worker):
    agent, receiver = PlainAgent(), WebhookReceiver()
    try:
        run_the_script(services, web, agent, receiver)
    finally:
        agent.stop()
        receiver.close()


def run_the_script(services: Any, url: str, agent: PlainAgent, receiver: WebhookReceiver) -> None:
    first, second = connection_per_process(url).values()
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

    def probed_and_delivered() -> bool:  # the delivery job counts its run only once the run has ended
        samples = scrape(first, url)
        return (
            value(samples, "agentdex_probes_total", outcome="up") >= 1
            and value(samples, "agentdex_relay_messages_delivered_total") == 1
            and value(samples, "agentdex_job_runs_total", job="relay-delivery", outcome="ok") >= 1
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
