"""`agentdex import` spreads its connections over the registry's web processes: a real loopback
server that names a process per connection, and a real two-process granian server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cli.client import WORKER_HEADER, RegistryClient
from cli.importer import Spread
from tests.support.waiting import wait_for


class Processes:
    """A loopback server whose connections answer `/healthz` as `names[i]` (the i-th connection
    accepted; the last name after that), as if each were accepted by that process."""

    def __init__(self, names: list[str | None]) -> None:
        self.names = names
        self.accepted = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one handler per connection

            def setup(self) -> None:
                super().setup()
                with lock:
                    self.worker = outer.names[min(outer.accepted, len(outer.names) - 1)]
                    outer.accepted += 1

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self.send_response(200)
                if self.worker is not None:
                    self.send_header(WORKER_HEADER, self.worker)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "15")
                self.end_headers()
                self.wfile.write(b'{"status":"ok"}')

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def processes() -> Iterator[type[Processes]]:
    started: list[Processes] = []

    def start(names: list[str | None]) -> Processes:
        started.append(Processes(names))
        return started[-1]

    yield start  # type: ignore[misc]
    for server in started:
        server.close()


def test_a_second_connection_on_the_same_process_is_made_again_until_it_reaches_another(processes):
    server = processes(["a", "a", "a", "b"])  # the first three connections reach process a
    spread = Spread(lambda: RegistryClient(server.url))
    first, second = spread.connect(), spread.connect()
    assert spread.held == {"a": 1, "b": 1}
    assert server.accepted == 4
    assert second.worker() == "b"  # the connection kept is the one that reached b
    third = spread.connect()  # both processes hold one: any will do
    assert sum(spread.held.values()) == 3 and server.accepted == 5
    for connection in (first, second, third):
        connection.close()


def test_a_single_process_server_costs_a_bounded_number_of_tries(processes):
    server = processes(["only"])
    spread = Spread(lambda: RegistryClient(server.url), tries=5)
    spread.connect(), spread.connect()
    assert spread.held == {"only": 2}
    assert server.accepted == 1 + 5


def test_a_registry_that_does_not_name_its_processes_is_used_as_it_comes(processes):
    server = processes([None])
    spread = Spread(lambda: RegistryClient(server.url))
    spread.connect(), spread.connect()
    assert (spread.held, server.accepted) == ({}, 2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_two_processes_of_a_granian_server_have_names_of_their_own_and_connections_spread_over_them(tmp_path: Path):
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "AGENTDEX_DATABASE_URL": f"sqlite:///{tmp_path}/spread.db", "AGENTDEX_SECRET_KEY": "s" * 32}
    subprocess.run([str(bin_dir / "agentdex"), "db", "upgrade"], env=env, check=True, capture_output=True)
    port = _free_port()
    server = subprocess.Popen(
        [
            str(bin_dir / "granian"),
            "--interface",
            "wsgi",
            "--workers",
            "2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
            "registry.wsgi:app",
        ],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        seen: set[str] = set()

        def both_up() -> bool:  # each process answers once it has loaded the app
            seen.update(name for name in [_answers(url)] if name)
            return len(seen) == 2

        assert wait_for(both_up, 60), f"granian did not start two processes: {seen}"
        spread = Spread(lambda: RegistryClient(url))
        connections = [spread.connect() for _ in range(4)]
        assert sorted(spread.held.values()) == [2, 2]  # two processes, two connections each
        for connection in connections:
            connection.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _answers(url: str) -> str | None:
    """The name of the process a new connection reaches; None before the server is up."""
    client = RegistryClient(url, timeout=1)
    try:
        return client.worker()
    except Exception:  # noqa: BLE001 - not up yet
        return None
    finally:
        client.close()  # an open connection would hold granian's graceful stop
