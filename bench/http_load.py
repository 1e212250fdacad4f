"""The load generator of the benchmarks: keep-alive HTTP/1.1 connections to the registry, and
registration of many cards over many of them at once from one thread."""

from __future__ import annotations

import collections
import json
import selectors
import socket
import time
from typing import Any

from cli.importer import Spread


class Http:
    """One keep-alive HTTP/1.1 connection to the registry, lean enough that the load generator
    does not take the CPU the server is being measured on (the machine has two cores)."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.headers: dict[bytes, bytes] = {}  # of the last response
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.head = f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{auth}".encode()

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, raw = self.send(method, path, None if body is None else json.dumps(body).encode())
        return status, (json.loads(raw) if raw else None)

    def send(
        self, method: str, path: str, data: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """One request with an already encoded body; (status, raw response body)."""
        length = b"" if data is None else b"Content-Length: %d\r\n" % len(data)
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items()).encode()
        self.sock.sendall(
            b"%s %s HTTP/1.1\r\n%s%s%s\r\n%s" % (method.encode(), path.encode(), self.head, extra, length, data or b"")
        )
        while b"\r\n\r\n" not in self.buffer:
            self.receive()
        status = self._take_head()
        if self.headers.get(b"transfer-encoding") == b"chunked":
            return status, self._chunked()
        size = int(self.headers.get(b"content-length", b"0"))
        while len(self.buffer) < size:
            self.receive()
        raw, self.buffer = self.buffer[:size], self.buffer[size:]
        return status, raw

    def take_response(self) -> tuple[int, bytes] | None:
        """(status, body) of a response already whole in the buffer (with a Content-Length), or
        None while it is not; for a caller that reads the socket itself (`post_cards`)."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buffer[:end].lower()
        at = head.find(b"content-length:")
        if at < 0:
            raise ConnectionError("a response without Content-Length: " + repr(self.buffer[:200]))
        size = int(head[at + 15 :].split(b"\r\n", 1)[0])
        if len(self.buffer) < end + 4 + size:
            return None
        status = self._take_head()
        raw, self.buffer = self.buffer[:size], self.buffer[size:]
        return status, raw

    def _take_head(self) -> int:
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
        return int(lines[0].split()[1])

    def worker(self) -> str | None:
        """The registry's web process this connection reaches (`Agentdex-Worker` on /healthz)."""
        self.send("GET", "/healthz")
        return self.headers.get(b"agentdex-worker", b"").decode() or None

    def close(self) -> None:
        self.sock.close()

    def _chunked(self) -> bytes:
        body = b""
        while True:
            while b"\r\n" not in self.buffer:
                self.receive()
            line, self.buffer = self.buffer.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            while len(self.buffer) < size + 2:
                self.receive()
            body, self.buffer = body + self.buffer[:size], self.buffer[size + 2 :]
            if size == 0:
                return body

    def receive(self) -> None:
        """Read what the socket holds into the buffer (blocks until something arrives)."""
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the registry closed the connection")
        self.buffer += chunk


def post_cards(
    port: int, token: str, items: list[dict[str, Any]], clients: int, timeout: float = 1800.0
) -> tuple[float, list[float]]:
    """Register each item with its own `POST /v1/agents` over `clients` keep-alive connections;
    a connection sends the next item as soon as its answer is in.

    One thread drives every connection (`selectors`): a thread per connection cost this client
    ~0.1 ms of CPU a card, a twentieth of what the server may spend on the same two cores.
    Returns (wall seconds, latencies in ms). Raises RuntimeError when a registration fails or the
    phase outlasts `timeout` (benchmarks stop by themselves).
    """
    if not items:
        return 0.0, []
    spread = Spread(lambda: Http(port, token))  # as `agentdex import` does: a burst of new
    # connections was otherwise split anywhere from 8/8 to 5/11 between two web processes, a
    # property of the accept race rather than of the registry
    connections = [spread.connect() for _ in range(min(clients, len(items)))]
    requests = collections.deque(  # encoded before the clock starts
        b"POST /v1/agents HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (connections[0].head, len(data), data)
        for data in (json.dumps(item).encode() for item in items)
    )
    latencies: list[float] = []
    failures: list[bytes] = []
    started: dict[Http, float] = {}
    selector = selectors.DefaultSelector()

    def send_next(http: Http) -> None:
        if requests:
            started[http] = time.perf_counter()
            http.sock.sendall(requests.popleft())
        else:
            selector.unregister(http.sock)

    t0 = time.perf_counter()
    for http in connections:
        selector.register(http.sock, selectors.EVENT_READ, http)
        send_next(http)
    while selector.get_map():
        left = timeout - (time.perf_counter() - t0)
        if left <= 0:
            raise RuntimeError(f"registration did not finish within {timeout:.0f} s")
        for key, _ in selector.select(left):
            http = key.data
            http.receive()
            answer = http.take_response()
            if answer is not None:
                latencies.append((time.perf_counter() - started[http]) * 1000)
                if answer[0] != 201:
                    failures.append(answer[1][:500])
                send_next(http)
    wall = time.perf_counter() - t0
    selector.close()
    for http in connections:
        http.close()
    if failures:
        raise RuntimeError(f"{len(failures)} registrations failed, e.g. {failures[0]!r}")
    return wall, latencies
