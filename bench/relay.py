"""Push-relay benchmark: ingest rate, one worker's delivery rate, and the latency the relay adds
between its 202 and the client's webhook, with 1 KB notifications and a loopback sink, on SQLite
and PostgreSQL. The registry runs as in production: granian for the ingress, `agentdex worker`
for delivery (a separate process, woken through the database).

    python bench/relay.py                              # SQLite
    python bench/relay.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/bench

Phases, per database: the floor (the bench POSTing straight to the sink); ingest with no worker
running (the backlog); one worker draining that backlog; then 300 notifications/s paced with the
worker running, timing each message from its 202 to its arrival at the sink.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    BIN,
    Table,
    add_database_options,
    cpu_seconds,
    each_database,
    registry_server,
    server_cpu_seconds,
    start_worker,
)
from bench.http_load import Http  # noqa: E402

BODY_BYTES = 1024
RELAY_ENV = {"AGENTDEX_RELAY_RATE": "1000000", "AGENTDEX_RELAY_BURST": "1000000"}  # the bench is one agent


class Sink:
    """The client's webhook, in a process of its own (as a client's server would be, so neither it nor
    the load generator waits for the other's interpreter lock): answers 204 at once and notes when
    each webhook-id first arrived (`time.monotonic()`, one clock for every process on the host)."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve_sink, args=(child,), daemon=True)
        self._process.start()
        self.port: int = self._pipe.recv()
        self._lock = threading.Lock()

    @property
    def arrivals(self) -> dict[str, float]:
        return self._ask("arrivals")

    def wait_for(self, distinct: int, timeout: float) -> bool:
        return self._poll(lambda: self._ask("distinct") >= distinct, timeout)

    def wait_until_ids(self, ids: dict[str, float], timeout: float) -> bool:
        return self._poll(lambda: ids.keys() <= self._ask("arrivals").keys(), timeout)

    def close(self) -> None:
        self._ask("stop")
        self._process.join(timeout=10)

    def _ask(self, question: str) -> Any:
        with self._lock:
            self._pipe.send(question)
            return self._pipe.recv()

    @staticmethod
    def _poll(done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)  # when a message arrived is noted by the sink, not found by this poll
        return True


def _serve_sink(pipe: Any) -> None:
    arrivals: dict[str, float] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            now, webhook_id = time.monotonic(), self.headers.get("webhook-id")
            if webhook_id:
                with lock:
                    arrivals.setdefault(webhook_id, now)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
    httpd.daemon_threads = True
    httpd.request_queue_size = 256  # before listen(): the worker opens many connections at once
    httpd.server_bind()
    httpd.server_activate()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    pipe.send(httpd.server_address[1])
    while (question := pipe.recv()) != "stop":
        with lock:
            pipe.send(len(arrivals) if question == "distinct" else dict(arrivals))
    httpd.shutdown()
    pipe.send(None)


def cpu_note(seconds: float, count: int) -> str:
    """CPU per notification, and what one free core could do at that cost."""
    per = seconds / count * 1000 if count else float("nan")
    return f"[{per:.2f} ms CPU each, ~{1000 / per:.0f}/s per free core]" if per else ""


def notification(task: str, n: int) -> bytes:
    """A 1 KB v1.0 StreamResponse (a status update with an agent message)."""
    body = {
        "statusUpdate": {
            "taskId": task,
            "contextId": "bench",
            "status": {
                "state": "TASK_STATE_WORKING",
                "message": {"messageId": f"m{n}", "role": "ROLE_AGENT", "parts": [{"text": ""}]},
            },
        }
    }
    pad = BODY_BYTES - len(json.dumps(body, separators=(",", ":")))
    body["statusUpdate"]["status"]["message"]["parts"][0]["text"] = "x" * pad
    return json.dumps(body, separators=(",", ":")).encode()


class Pusher:
    """One agent connection (keep-alive) that POSTs notifications to a relay URL."""

    def __init__(self, port: int) -> None:
        self.http = Http(port)

    def push(self, path: str, token: str, body: bytes) -> tuple[int, str]:
        status, payload = self.http.send("POST", path, body, {"X-A2A-Notification-Token": token})
        return status, (json.loads(payload).get("id", "") if status == 202 else "")


def setup(port: int, token: str, sink: Sink, subscriptions: int) -> list[tuple[str, str]]:
    """One push-capable agent and `subscriptions` subscriptions to the sink: [(path, relay token)]."""
    api = Http(port, token)
    card = {
        "name": "Bench Pusher",
        "description": "pushes",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "https://pusher.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"pushNotifications": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }
    status, agent = api.request("POST", "/v1/agents", {"card": card, "cardUrl": "https://pusher.example.com/card.json"})
    assert status == 201, agent
    subs = []
    for _ in range(subscriptions):
        status, sub = api.request(
            "POST",
            "/v1/relay/subscriptions",
            {"agentId": agent["id"], "targetUrl": f"http://127.0.0.1:{sink.port}/hook"},
        )
        assert status == 201, sub
        subs.append(("/relay/" + sub["id"], sub["relayToken"]))
    return subs


def floor(sink: Sink, count: int, table: Table) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", sink.port, timeout=10)
    body, latencies = notification("floor", 0), []
    started = time.monotonic()
    for n in range(count):
        began = time.monotonic()
        conn.request(
            "POST", "/hook", body=body, headers={"Content-Type": "application/json", "webhook-id": f"floor-{n}"}
        )
        conn.getresponse().read()
        latencies.append((time.monotonic() - began) * 1000)
    table.add("floor: direct POST to the sink, 1 KB", count, time.monotonic() - started, latencies)


def ingest(
    port: int, subs: list[tuple[str, str]], count: int, clients: int, tasks: int, label: str, table: Table
) -> None:
    """`clients` agents push `count` notifications as fast as 202s come back (no worker running)."""

    def agent(client: int) -> list[float]:
        pusher, latencies = Pusher(port), []
        for n in range(client, count, clients):
            path, token = subs[n % len(subs)]
            began = time.monotonic()
            status, _ = pusher.push(path, token, notification(f"task-{n % tasks}", n))
            assert status == 202, status
            latencies.append((time.monotonic() - began) * 1000)
        return latencies

    cpu, started = server_cpu_seconds(port), time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        latencies = [ms for part in pool.map(agent, range(clients)) for ms in part]
    elapsed, cpu = time.monotonic() - started, server_cpu_seconds(port) - cpu
    table.add(f"{label}: ingest, {clients} agents {cpu_note(cpu, count)}", count, elapsed, latencies)


def drain(env: dict[str, str], sink: Sink, backlog: int, label: str, table: Table) -> subprocess.Popen[bytes]:
    """One worker delivers the backlog; timed from its first delivery to its last (start-up excluded)."""
    before = len(sink.arrivals)
    worker = start_worker(env, "relay-delivery")
    marker = f"{BIN / 'agentdex'} worker"
    try:
        if not sink.wait_for(before + 1, timeout=60):
            raise RuntimeError("the worker delivered nothing in 60 s")
        cpu = cpu_seconds(marker)  # start-up (imports, schema check) excluded
        if not sink.wait_for(before + backlog, timeout=300):
            raise RuntimeError(f"the worker delivered {len(sink.arrivals) - before} of {backlog} in 300 s")
        cpu = cpu_seconds(marker) - cpu
    except BaseException:  # the benchmark stops by itself: never leave the worker running
        worker.terminate()
        worker.wait(timeout=60)
        raise
    times = sorted(sink.arrivals.values())[before:]
    table.add(f"{label}: one worker, backlog {cpu_note(cpu, backlog)}", backlog, times[-1] - times[0])
    return worker


def paced(
    port: int, subs: list[tuple[str, str]], sink: Sink, rate: int, seconds: float, tasks: int, label: str, table: Table
) -> None:
    """`rate` notifications/s with the worker running: 202 -> arrival at the sink, per message."""
    count, accepted = int(rate * seconds), {}
    lock = threading.Lock()
    senders = 8

    def agent(client: int) -> None:
        pusher = Pusher(port)
        start = time.monotonic()
        for k, n in enumerate(range(client, count, senders)):
            due = start + k * senders / rate
            time.sleep(max(0.0, due - time.monotonic()))  # pacing the load generator, not awaiting a result
            path, token = subs[n % len(subs)]
            status, message_id = pusher.push(path, token, notification(f"paced-{n % tasks}", n))
            assert status == 202, status
            with lock:
                accepted[message_id] = time.monotonic()

    started = time.monotonic()
    with ThreadPoolExecutor(senders) as pool:
        list(pool.map(agent, range(senders)))
    elapsed = time.monotonic() - started
    if not sink.wait_until_ids(accepted, timeout=60):
        raise RuntimeError("not every paced notification arrived within 60 s")
    arrivals = sink.arrivals
    added = [(arrivals[i] - t) * 1000 for i, t in accepted.items()]
    table.add(f"{label}: 202 -> sink at {rate}/s, worker running", count, elapsed, added)


def run(database_url: str, label: str, args: argparse.Namespace, table: Table) -> None:
    os.environ.update(RELAY_ENV)
    sink = Sink()
    try:
        with registry_server(database_url, workers=args.web_workers, threads=args.web_threads) as (port, token, env):
            subs = setup(port, token, sink, args.subscriptions)
            floor(sink, 2000, table)
            ingest(port, subs, args.backlog, args.clients, args.tasks, label, table)
            worker = drain({**env, **RELAY_ENV}, sink, args.backlog, label, table)
            try:
                paced(port, subs, sink, args.rate, args.seconds, args.tasks, label, table)
            finally:
                worker.terminate()
                worker.wait(timeout=60)
    finally:
        sink.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=5000, help="notifications ingested, then drained by one worker")
    parser.add_argument("--clients", type=int, default=16, help="concurrent agents during ingest")
    parser.add_argument("--subscriptions", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=64, help="distinct tasks (delivery is in order per task)")
    parser.add_argument("--rate", type=int, default=300, help="notifications/s in the latency phase")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the latency phase")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--web-threads", type=int, default=8)
    add_database_options(parser)
    args = parser.parse_args()
    table = Table()
    for url, label in each_database(args):
        run(url, label, args, table)
    table.print("python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
