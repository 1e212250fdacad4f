"""Nothing lost, nothing invented, order kept per agent, when the processes die: a web process
(`agentdex serve --no-jobs`) and a worker (`agentdex worker`, fan-out and delivery) on one
database take a stream of changes; both are killed with SIGKILL in the middle and started again.
The webhook then holds, per agent, exactly the events of the changes that committed (the audit
log, written in the same transactions, says which), in the order they committed."""

from __future__ import annotations

import collections
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import select

from registry.schema import AuditEntry
from tests.registry.events.conftest import parsed, subscribe
from tests.support.agentdex_processes import AgentdexProcess, free_port, user_env
from tests.support.cards import make_card, with_changes
from tests.support.waiting import wait_for
from tests.support.webhooks import WebhookReceiver, verify_webhook

THREADS = 4
AGENTS_PER_THREAD = 10  # five changes each: 200 events
KILL_AFTER = 20  # events delivered before both processes are killed
PREFIX = "io.agentdex.agent."


class Processes:
    """The web process on a fixed port (a restart keeps the clients' URL) and the worker."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self._cwd, self._env = cwd, env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.running: list[AgentdexProcess] = []

    def start(self) -> None:
        web = AgentdexProcess("serve", "--no-jobs", "--port", str(self.port), cwd=self._cwd, env=self._env, name="web")
        jobs = ("--job", "events-fanout", "--job", "relay-delivery")
        worker = AgentdexProcess("worker", *jobs, cwd=self._cwd, env=self._env, name="worker")
        self.running = [web, worker]
        assert web.wait_until_answering(self.url), web.output
        assert worker.wait_for_output("Ctrl-C stops it"), worker.output

    def kill(self) -> None:
        for process in self.running:
            process.process.send_signal(signal.SIGKILL)
            process.process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.running:
            process.stop()


@pytest.fixture
def processes(settings, tmp_path: Path) -> Iterator[Processes]:  # type: ignore[no-untyped-def]
    env = user_env(
        AGENTDEX_DATABASE_URL=settings.database_url,
        AGENTDEX_SECRET_KEY=settings.secret_key,
        AGENTDEX_ALLOWED_NETWORKS="127.0.0.0/8",
        AGENTDEX_ALLOW_HTTP="true",
        AGENTDEX_SEARCH_SEMANTIC="false",
        AGENTDEX_EVENTS_TICK="0.1",
        AGENTDEX_RELAY_TICK="0.2",
        AGENTDEX_RELAY_TIMEOUT="1",
        AGENTDEX_RELAY_CONNECT_TIMEOUT="1",
        AGENTDEX_RELAY_LEASE_SECONDS="2",
        AGENTDEX_METRICS="off",
    )
    running = Processes(tmp_path, env)
    yield running
    running.stop()


class ChangeStream:
    """Client threads, each changing its agents in turn: register, push a new card, deprecate,
    reactivate, delete. A change whose request dies with the web process may or may not have
    committed; the client waits for the registry to answer again and goes on."""

    def __init__(self, url: str, token: str) -> None:
        self._url, self._auth = url, {"Authorization": f"Bearer {token}"}
        self.sent = 0
        self._lock = threading.Lock()

    def run(self, thread: int) -> None:
        for n in range(AGENTS_PER_THREAD):
            name = f"Agent {thread}-{n}"
            card = make_card(name, tags=[f"group-{thread}"])
            url = f"https://agent-{thread}-{n}.example.com/.well-known/agent-card.json"
            created = self._send("POST", "/v1/agents", {"card": card, "cardUrl": url})
            if created is None or created.status_code != 201:
                continue  # unknown: the audit log says whether it committed
            path = f"/v1/agents/{created.json()['id']}"
            self._send("PUT", f"{path}/card", with_changes(card, version="2.0.0"))
            self._send("PATCH", path, {"status": "deprecated"})
            self._send("PATCH", path, {"status": "active"})
            self._send("DELETE", path, None)

    def _send(self, method: str, path: str, body: Any) -> requests.Response | None:
        with self._lock:
            self.sent += 1
        try:
            return requests.request(method, self._url + path, json=body, headers=self._auth, timeout=10)
        except requests.RequestException:
            wait_for(lambda: _answers(self._url), 60)
            return None


def _answers(url: str) -> bool:
    try:
        return requests.get(url + "/healthz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def expected_events(services) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Per agent, the events of the changes that committed, from the audit log (same transactions)."""
    with services.sessions() as session:
        entries = session.execute(select(AuditEntry).order_by(AuditEntry.id)).scalars().all()
    expected: dict[str, list[str]] = collections.defaultdict(list)
    status: dict[str, str] = {}
    for entry in entries:
        agent = entry.agent_id or ""
        if entry.action == "agent.register":
            expected[agent].append("registered")
            status[agent] = "active"
        elif entry.action == "card.replace":
            expected[agent].append("updated")
        elif entry.action == "agent.status" and entry.detail["status"] != status[agent]:
            status[agent] = entry.detail["status"]
            expected[agent].append("deprecated" if status[agent] == "deprecated" else "updated")
        elif entry.action == "agent.delete":
            expected[agent].append("deleted")
    return dict(expected)


def test_killing_web_and_worker_mid_stream_loses_and_invents_no_event(services, client, processes, tmp_path):  # type: ignore[no-untyped-def]
    receiver = WebhookReceiver()
    try:
        follower = {"Authorization": f"Bearer {services.tokens.create('follower', ['metrics:read']).token}"}
        subscribe(client, follower, receiver.url, ["registered", "updated", "deprecated", "deleted"])
        writer = services.tokens.create("writer", ["agents:write"]).token
        processes.start()
        stream = ChangeStream(processes.url, writer)
        threads = [threading.Thread(target=stream.run, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        assert wait_for(lambda: len(receiver.received) >= KILL_AFTER, 60)
        processes.kill()
        killed_at = stream.sent
        processes.start()
        for thread in threads:
            thread.join(timeout=120)
        assert killed_at < THREADS * AGENTS_PER_THREAD * 5, "the stream ended before the processes were killed"

        expected = expected_events(services)
        total = sum(len(kinds) for kinds in expected.values())
        assert total > 150  # most changes went through
        receiver.wait_until(lambda got: len({parsed(r).id for r in got}) >= total, timeout=60)
        jwks = client.get("/.well-known/jwks.json").json
        assert all(verify_webhook(r, jwks) for r in receiver.received)
        seen: set[str] = set()
        received: dict[str, list[str]] = collections.defaultdict(list)
        for got in receiver.received:  # at least once: a redelivery has the id of the first
            event = parsed(got)
            if event.id not in seen:
                seen.add(event.id)
                received[event.subject].append(event.type.removeprefix(PREFIX))
        assert dict(received) == expected
    finally:
        receiver.close()
