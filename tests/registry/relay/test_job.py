"""The relay-delivery job in a running worker: woken at once by a committed notification (in this
process, or another one through the database), and leases that keep two workers apart."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from registry.app import create_app
from registry.container import build_services
from registry.jobs.worker import Worker
from registry.relay.job import RelayDeliveryJob
from registry.settings import RelaySettings
from tests.registry.relay.conftest import push, status_update, subscribe
from tests.support.jobs import run_job
from tests.support.waiting import wait_for
from tests.support.webhooks import WebhookReceiver

SLOW_TICK = 3600.0  # no tick comes during a test: only a wake-up can deliver


@pytest.fixture
def relay_settings() -> RelaySettings:
    return RelaySettings(jitter=0.0, timeout=2.0, connect_timeout=1.0, rate=1e6, burst=10_000)


@pytest.fixture
def sub(client, relay_auth, push_agent, receiver):  # type: ignore[no-untyped-def]
    return subscribe(client, relay_auth, push_agent, receiver.url)


def _started(services) -> Worker:  # type: ignore[no-untyped-def]
    relay = services.relay
    watcher = relay.watcher
    job = RelayDeliveryJob(SLOW_TICK, relay.outbox, relay.wakeup, batch=16, watcher=watcher)
    runner = Worker([job], threads=4)
    runner.run_once()  # starts the dispatcher; no scheduler ticks at all, so only a wake-up delivers
    return runner


@pytest.fixture
def other_process(settings) -> Iterator:  # type: ignore[no-untyped-def]
    """Another registry process on the same database: its ingress cannot wake our worker directly."""
    other = build_services(settings)
    yield other
    other.close()


def test_a_committed_notification_wakes_the_worker_in_this_process(services, client, sub, receiver):
    runner = _started(services)
    try:
        message_id = push(client, sub, status_update("t")).json["id"]
        assert receiver.wait_for(1, timeout=5)[0].webhook_id == message_id
    finally:
        runner.stop()


def test_a_notification_committed_by_another_process_wakes_the_worker(services, other_process, sub, receiver):
    runner = _started(services)
    try:
        other_client = create_app(services=other_process).test_client()
        message_id = push(other_client, sub, status_update("t")).json["id"]
        assert receiver.wait_for(1, timeout=5)[0].webhook_id == message_id
    finally:
        runner.stop()


def test_a_target_that_hangs_holds_up_no_other_delivery(services, client, relay_auth, push_agent, sub, receiver):
    hanging = WebhookReceiver()
    hanging.script.append("hang")  # answers nothing until closed
    slow_sub = subscribe(client, relay_auth, push_agent, hanging.url)
    runner = _started(services)
    try:
        push(client, slow_sub, status_update("slow"))
        hanging.wait_for(1, timeout=5)
        first, second = (push(client, sub, status_update("fast")).json["id"] for _ in range(2))
        # Within a straggler's half second, not when the hanging delivery ends (the relay's timeout):
        # the second waits for the first (in order per task), so the first is also recorded by then.
        assert [r.webhook_id for r in receiver.wait_for(2, timeout=1.5)] == [first, second]
        assert wait_for(lambda: _state(client, relay_auth, second) == "delivered", 1.0)
        assert len(hanging.received) == 1 and not hanging.released
    finally:
        hanging.close()
        runner.stop()


def _state(client, relay_auth, message_id: str) -> str:  # type: ignore[no-untyped-def]
    return str(client.get(f"/v1/relay/messages/{message_id}", headers=relay_auth).json["state"])


def test_two_workers_never_deliver_a_message_twice(relay, client, relay_auth, push_agent, receiver):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    ids = {push(client, sub, status_update(f"task-{i % 20}")).json["id"] for i in range(120)}
    jobs = [RelayDeliveryJob(1.0, relay.outbox, relay.wakeup, batch=8, dispatcher=False) for _ in range(2)]
    start = threading.Barrier(2)

    def worker(job: RelayDeliveryJob, name: str) -> None:
        start.wait()
        run_job(job, owner=name)

    threads = [threading.Thread(target=worker, args=(job, f"worker-{n}")) for n, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    delivered = [r.webhook_id for r in receiver.received]
    assert sorted(delivered) == sorted(ids)  # each exactly once
