"""Nothing is lost when a worker dies: `agentdex worker` processes, one killed with SIGKILL in the
middle of delivering 1,000 messages, another started after it (SQLite file or PostgreSQL)."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import func, select

from registry.relay.ingress import Notification
from registry.schema import RelayMessage
from registry.settings import RelaySettings
from tests.registry.relay.conftest import status_update, subscribe

AGENTDEX = Path(sys.executable).parent / "agentdex"
MESSAGES = 1_000
TASKS = 10
LEASE = 2.0  # a killed worker's leases pass to the next worker after this long


@pytest.fixture
def relay_settings() -> RelaySettings:
    return RelaySettings(jitter=0.0, rate=1e6, burst=MESSAGES)


@pytest.fixture
def worker_env(settings) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        **os.environ,
        "AGENTDEX_DATABASE_URL": settings.database_url,
        "AGENTDEX_SECRET_KEY": settings.secret_key,
        "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8",
        "AGENTDEX_ALLOW_HTTP": "true",
        "AGENTDEX_RELAY_TICK": "0.2",
        "AGENTDEX_RELAY_TIMEOUT": "1",
        "AGENTDEX_RELAY_CONNECT_TIMEOUT": "1",
        "AGENTDEX_RELAY_LEASE_SECONDS": str(LEASE),
        "AGENTDEX_WORKER_THREADS": "8",
    }


@pytest.fixture
def start_worker(worker_env) -> Iterator:  # type: ignore[no-untyped-def]
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [str(AGENTDEX), "worker", "--job", "relay-delivery"],
            env=worker_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_a_worker_killed_mid_delivery_loses_nothing(
    relay, client, relay_auth, push_agent, receiver, services, start_worker
):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)

    def accept(n: int) -> None:  # one task's messages from one agent thread, in order
        relay.ingress.accept(Notification(sub["id"], _body(n), (sub["relayToken"],), None, lambda: sub["relayUrl"]))

    with ThreadPoolExecutor(TASKS) as agents:
        list(agents.map(lambda task: [accept(n) for n in range(task, MESSAGES, TASKS)], range(TASKS)))

    first = start_worker()
    receiver.wait_for(MESSAGES // 5, timeout=60)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert len(receiver.distinct_ids()) < MESSAGES, "the worker finished before it could be killed"

    second = start_worker()
    receiver.wait_until(lambda got: len({r.webhook_id for r in got}) == MESSAGES, timeout=60)
    second.send_signal(signal.SIGTERM)  # stops claiming, records what it delivered, exits
    assert second.wait(timeout=30) == 0

    with services.sessions() as session:
        states = dict(session.execute(select(RelayMessage.state, func.count()).group_by(RelayMessage.state)).all())
    assert states == {"delivered": MESSAGES}
    _assert_in_order_per_task(receiver.received)


def _body(n: int) -> bytes:
    import json

    body = status_update(f"task-{n % TASKS}")
    body["statusUpdate"]["metadata"] = {"n": n}
    return json.dumps(body).encode()


def _assert_in_order_per_task(received):  # type: ignore[no-untyped-def]
    """First deliveries of each task's messages come in the order the agent sent them."""
    import json

    seen: set[str] = set()
    per_task: dict[str, list[int]] = collections.defaultdict(list)
    for got in received:
        if got.webhook_id in seen:
            continue  # at least once: a message the killed worker sent but never recorded comes again
        seen.add(got.webhook_id)
        update = json.loads(got.body)["statusUpdate"]
        per_task[update["taskId"]].append(update["metadata"]["n"])
    assert all(numbers == sorted(numbers) for numbers in per_task.values())
    assert sum(len(numbers) for numbers in per_task.values()) == MESSAGES
