"""End to end with real peers: an `a2a-sdk` agent pushes its task updates to Agentdex, a running
worker relays them to the client's webhook, authenticated in both directions."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from registry.app import create_app
from registry.jobs.worker import Worker
from tests.support.push_agents import PushSdkAgent, send_with_push
from tests.support.webhooks import LiveRegistry, verify_webhook


@pytest.fixture
def sdk_agent() -> Iterator[PushSdkAgent]:
    agent = PushSdkAgent()
    yield agent
    agent.close()


@pytest.fixture
def live(services) -> Iterator[LiveRegistry]:  # type: ignore[no-untyped-def]
    server = LiveRegistry(create_app(services=services))
    services.settings = dataclasses.replace(services.settings, public_url=server.base_url)
    yield server
    server.close()


class RecordedOutcomes:
    """Wraps the outbox's `record` so a test can await the moment outcomes are written."""

    def __init__(self, outbox: Any) -> None:
        self.count = 0
        self._cond = threading.Condition()
        self._record = outbox.record
        outbox.record = self

    def __call__(self, owner: str, outcomes: Any) -> int:
        written = self._record(owner, outcomes)
        with self._cond:
            self.count += written
            self._cond.notify_all()
        return written

    def wait_for(self, count: int, timeout: float = 15.0) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: self.count >= count, timeout), f"{self.count} of {count} recorded"


@pytest.fixture
def recorded(services) -> RecordedOutcomes:  # type: ignore[no-untyped-def]
    return RecordedOutcomes(services.relay.outbox)


@pytest.fixture
def worker(services, recorded) -> Iterator[Worker]:  # type: ignore[no-untyped-def]
    runner = Worker([services.relay.delivery_job(services.settings)], threads=4)
    runner.start()
    yield runner
    runner.stop()


def test_sdk_agent_push_notifications_reach_the_client_through_the_relay(
    services,
    live,
    worker,
    recorded,
    sdk_agent,
    receiver,
    auth,
    relay_auth,  # type: ignore[no-untyped-def]
):
    api = requests.Session()
    registered = api.post(f"{live.base_url}/v1/agents", json={"url": sdk_agent.base_url}, headers=auth)
    assert registered.status_code == 201, registered.text
    assert registered.json()["capabilities"]["pushNotifications"] is True
    sub = api.post(
        f"{live.base_url}/v1/relay/subscriptions",
        headers=relay_auth,
        json={
            "agentId": registered.json()["id"],
            "targetUrl": receiver.url,
            "targetToken": "client-secret-token",
        },
    ).json()

    results = asyncio.run(send_with_push(sdk_agent, sub["relayUrl"], sub["relayToken"]))
    assert results[-1].task.status.state == 3  # TASK_STATE_COMPLETED

    sent = [body for url, body in sdk_agent.sent if url == sub["relayUrl"]]
    kinds = [next(iter(json.loads(body))) for body in sent]
    assert kinds[-1] == "statusUpdate" and "artifactUpdate" in kinds, kinds
    received = receiver.wait_for(len(sent))
    assert [r.body for r in received] == sent  # every update, unchanged, in the agent's order
    jwks = api.get(f"{live.base_url}/.well-known/jwks.json").json()
    for got in received:
        assert got.headers["x-a2a-notification-token"] == "client-secret-token"
        assert verify_webhook(got, jwks)
    assert len({r.webhook_id for r in received}) == len(sent)
    recorded.wait_for(len(sent))
    messages = api.get(f"{live.base_url}/v1/relay/subscriptions/{sub['id']}/messages", headers=relay_auth).json()
    assert {m["state"] for m in messages["items"]} == {"delivered"}


def test_the_agent_is_refused_without_the_relay_token(services, live, sdk_agent, receiver, auth, relay_auth):  # type: ignore[no-untyped-def]
    api = requests.Session()
    agent_id = api.post(f"{live.base_url}/v1/agents", json={"url": sdk_agent.base_url}, headers=auth).json()["id"]
    sub = api.post(
        f"{live.base_url}/v1/relay/subscriptions",
        headers=relay_auth,
        json={"agentId": agent_id, "targetUrl": receiver.url},
    ).json()
    asyncio.run(send_with_push(sdk_agent, sub["relayUrl"], "adxr_not-the-token"))
    assert sdk_agent.sent  # the agent did push
    listed = api.get(f"{live.base_url}/v1/relay/subscriptions/{sub['id']}/messages", headers=relay_auth).json()
    assert listed["items"] == [] and receiver.received == []
