"""`GET /metrics` read by Prometheus' own text parser after a scripted sequence: a registration, an
invalid card, a fetch that fails, a search, a probe of a real loopback A2A agent and a relay
delivery (one failed attempt, then delivered) to a real webhook receiver. Every counter moves by
exactly what happened, and the gauges say what the database holds."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sqlalchemy import select

from registry.catalog import Agent
from registry.container import jwks_fetcher
from registry.health.crawler import DueCrawl
from registry.jobs.worker import Worker
from registry.relay.job import RelayDeliveryJob
from registry.settings import RelaySettings, Settings
from registry.settings_operations import OperationsSettings
from signing import JwksFetchError
from tests.registry.metrics.exposition import Samples, samples_of, value
from tests.support.a2a_agents import PlainAgent
from tests.support.agentdex_processes import free_port
from tests.support.cards import make_card
from tests.support.webhooks import WebhookReceiver


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Deliveries due at once, one retry right away: a run of the job delivers what a failure left.
    relay = RelaySettings(retry_schedule=(0.0, 0.0), jitter=0.0, timeout=2.0, connect_timeout=2.0)
    return dataclasses.replace(settings, relay=relay)


@pytest.fixture
def agent() -> Any:
    agent = PlainAgent()
    yield agent
    agent.stop()


@pytest.fixture
def receiver() -> Any:
    server = WebhookReceiver()
    yield server
    server.close()


def scrape(client: Any, **headers: str) -> Samples:
    """Every sample of /metrics as parsed by prometheus_client.parser: (name, labels) -> value."""
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.data
    assert response.content_type.startswith("text/plain")
    return samples_of(response.get_data(as_text=True))


def test_counters_move_by_exactly_what_the_scripted_sequence_did(client, services, auth, agent, receiver):
    before = scrape(client)

    registered = client.post("/v1/agents", json={"url": agent.base_url}, headers=auth)
    assert registered.status_code == 201, registered.json
    agent_id = registered.json["id"]
    bad_card = make_card("Broken")
    del bad_card["name"]
    invalid = client.post("/v1/agents", json={"card": bad_card, "cardUrl": "https://x.example/card.json"}, headers=auth)
    assert invalid.status_code == 422
    first_rule = next(i["rule"] for i in invalid.json["error"]["details"]["issues"] if i["severity"] == "error")
    unreachable = client.post("/v1/agents", json={"url": f"http://127.0.0.1:{free_port()}"}, headers=auth)
    assert unreachable.status_code >= 400
    assert client.get("/v1/agents?tag=plain").status_code == 200
    assert client.get("/no/such/page").status_code == 404
    probed = client.post(f"/v1/agents/{agent_id}/check", headers=auth)
    assert probed.status_code == 200, probed.json

    relay_auth = {"Authorization": f"Bearer {services.tokens.create('client', ['relay']).token}"}
    pusher = make_card("Pusher", url="https://push.example.com/a2a", push=True)  # uploaded: nothing fetched
    pusher_id = client.post(
        "/v1/agents", json={"card": pusher, "cardUrl": "https://push.example.com/card.json"}, headers=auth
    ).json["id"]
    sub = client.post(
        "/v1/relay/subscriptions", json={"agentId": pusher_id, "targetUrl": receiver.url}, headers=relay_auth
    ).json
    relay_path = "/" + sub["relayUrl"].split("://", 1)[1].split("/", 1)[1]
    note = {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}
    pushed = client.post(relay_path, json=note, headers={"X-A2A-Notification-Token": sub["relayToken"]})
    assert pushed.status_code == 202, pushed.json
    receiver.fail_next(1)  # the first attempt fails, the retry delivers
    job = RelayDeliveryJob(1.0, services.relay.outbox, services.relay.wakeup, batch=8, dispatcher=False)
    worker = Worker([job], threads=2, metrics=services.metrics)
    try:
        (report,) = worker.run_once()
    finally:
        worker.stop()
    assert report.recorded == 2 and len(receiver.wait_for(2)) == 2

    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("agentdex_registrations_total", outcome="created") == 2
    assert moved("agentdex_registrations_total", outcome="invalid_card") == 1
    assert moved("agentdex_registrations_total", outcome=unreachable.json["error"]["code"]) == 1
    assert moved("agentdex_card_validations_total", outcome="valid", rule="") == 2
    assert moved("agentdex_card_validations_total", outcome="invalid", rule=first_rule) == 1
    post = {"route": "/v1/agents", "method": "POST"}
    assert moved("agentdex_http_requests_total", **post, status="201") == 2
    assert moved("agentdex_http_requests_total", **post, status="422") == 1
    assert moved("agentdex_http_requests_total", route="/v1/agents", method="GET", status="200") == 1
    assert moved("agentdex_http_requests_total", route="unmatched", method="GET", status="404") == 1
    assert moved("agentdex_http_requests_total", route="/relay/<sub_id>", method="POST", status="202") == 1
    assert moved("agentdex_http_request_duration_seconds_count", **post) == 4
    assert moved("agentdex_http_requests_total", route="/metrics", method="GET", status="200") == 1
    assert moved("agentdex_probes_total", outcome="up") == 1
    assert moved("agentdex_probe_duration_seconds_count") == 1
    assert moved("agentdex_relay_messages_accepted_total") == 1
    assert moved("agentdex_relay_messages_retried_total") == 1
    assert moved("agentdex_relay_messages_delivered_total") == 1
    assert moved("agentdex_relay_messages_dead_lettered_total") == 0
    assert moved("agentdex_relay_delivery_duration_seconds_count") == 2
    assert moved("agentdex_job_runs_total", job="relay-delivery", outcome="ok") == 1
    assert moved("agentdex_job_run_duration_seconds_count", job="relay-delivery") == 1
    # Gauges: what the database holds now.
    assert value(after, "agentdex_agents", status="active") == 2
    assert value(after, "agentdex_agents_by_health", state="up") == 1
    assert value(after, "agentdex_relay_queue_depth") == 0
    assert value(after, "agentdex_relay_oldest_due_message_age_seconds") == 0
    assert ("agentdex_db_pool_connections_in_use", (("pool", "main"),)) in after


def test_crawls_and_jwks_fetches_are_counted_by_outcome(client, services, auth, agent, card_server):
    registered = client.post("/v1/agents", json={"url": agent.base_url}, headers=auth)
    assert registered.status_code == 201, registered.json
    with services.engine.connect() as conn:
        pk, card_url = conn.execute(select(Agent.pk, Agent.card_url)).one()
    fetcher = jwks_fetcher(services.settings, services.http, services.metrics)  # as the container wires it
    card_server.serve_json("/jwks.json", {"keys": []})
    before = scrape(client)

    services.crawler.perform(DueCrawl(pk, card_url, None, None, 0))  # the agent answers its card again
    nobody = f"http://127.0.0.1:{free_port()}/.well-known/agent-card.json"
    services.crawler.perform(DueCrawl(pk, nobody, None, None, 0))
    fetcher(card_server.url("/jwks.json"))
    with pytest.raises(JwksFetchError):
        fetcher(card_server.url("/missing.json"))

    after = scrape(client)
    moved = [
        value(after, name, **labels) - value(before, name, **labels)
        for name, labels in [
            ("agentdex_crawls_total", {"outcome": "fetched"}),
            ("agentdex_crawls_total", {"outcome": "failed"}),
            ("agentdex_crawl_duration_seconds_count", {}),
            ("agentdex_card_validations_total", {"outcome": "valid", "rule": ""}),
            ("agentdex_jwks_fetches_total", {"outcome": "ok"}),
            ("agentdex_jwks_fetches_total", {"outcome": "failed"}),
        ]
    ]
    assert moved == [1, 1, 2, 1, 1, 1]


@pytest.fixture
def token_mode(services: Any) -> Any:
    services.settings = dataclasses.replace(services.settings, operations=OperationsSettings(metrics="token"))
    return services


def test_in_token_mode_only_an_admin_or_a_metrics_read_token_may_scrape(token_mode, client, auth, admin_token):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=auth).status_code == 403  # agents:write is not enough
    reader = token_mode.tokens.create("prometheus", ["metrics:read"]).token
    assert client.get("/metrics", headers={"Authorization": f"Bearer {reader}"}).status_code == 200
    assert client.get("/metrics", headers={"Authorization": f"Bearer {admin_token}"}).status_code == 200
