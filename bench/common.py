"""Shared pieces of the benchmarks: a registry server in a subprocess, an HTTP client with
keep-alive, latency statistics and the result table."""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cli.importer import Spread

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def cpu_ticks() -> tuple[int, int]:
    """(all, stolen) CPU ticks of the machine so far (/proc/stat; 0, 0 where it is not readable)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0


def reference_loop_ms() -> float:
    """How long a fixed pure-Python loop takes now (median of three). On a shared virtual machine
    the same work can take twice as long from one minute to the next without any steal showing;
    this says how fast the machine was when a row was measured (smaller is faster)."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(1_000_000))
        times.append((time.perf_counter() - t0) * 1000)
    return sorted(times)[1]


class Table:
    """Rows of (what, how many, rate/s, p50 ms, p99 ms), printed aligned, with the share of CPU
    time the host took from this virtual machine (steal) since the previous row: a row measured
    while the host stole much ran on less than two cores; and `loop ms`, the machine's pace just
    after the row (`reference_loop_ms`)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, int, float, float, float, float, float]] = []
        self._ticks = cpu_ticks()

    def add(self, what: str, count: int, seconds: float, latencies_ms: list[float] | None = None) -> None:
        lat = latencies_ms or []
        ticks = cpu_ticks()
        total, stolen = ticks[0] - self._ticks[0], ticks[1] - self._ticks[1]
        self._ticks = ticks
        self.rows.append((what, count, count / seconds if seconds else float("nan"),
                          percentile(lat, 50) if lat else float("nan"), percentile(lat, 99) if lat else float("nan"),
                          100 * stolen / total if total else float("nan"), reference_loop_ms()))
        print(f"  {what}: {count} in {seconds:.2f}s", flush=True)

    def print(self, command: str) -> None:
        print()
        print(f"{'what':<58} {'how many':>9} {'rate/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'stolen':>7} {'loop ms':>8}")
        for what, count, rate, p50, p99, steal, pace in self.rows:
            print(f"{what:<58} {count:>9} {rate:>9.0f} {p50:>8.2f} {p99:>8.2f} {steal:>6.0f}% {pace:>8.1f}")
        print(f"\nreproduce: {command}")


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

    def send(self, method: str, path: str, data: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """One request with an already encoded body; (status, raw response body)."""
        length = b"" if data is None else b"Content-Length: %d\r\n" % len(data)
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items()).encode()
        self.sock.sendall(b"%s %s HTTP/1.1\r\n%s%s%s\r\n%s" % (
            method.encode(), path.encode(), self.head, extra, length, data or b""))
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
        size = int(head[at + 15:].split(b"\r\n", 1)[0])
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
            body, self.buffer = body + self.buffer[:size], self.buffer[size + 2:]
            if size == 0:
                return body

    def receive(self) -> None:
        """Read what the socket holds into the buffer (blocks until something arrives)."""
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the registry closed the connection")
        self.buffer += chunk


def post_cards(port: int, token: str, items: list[dict[str, Any]], clients: int,
               timeout: float = 1800.0) -> tuple[float, list[float]]:
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
        for data in (json.dumps(item).encode() for item in items))
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


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL (its public schema is reset)")
    parser.add_argument("--skip-sqlite", action="store_true")


def each_database(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """(database URL, label): a fresh SQLite file unless --skip-sqlite, then --postgres reset."""
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/bench.db", "sqlite"
    if args.postgres:
        reset_postgres(args.postgres)
        yield args.postgres, "postgres"


def settle(url: str, timeout: float = 120.0) -> float:
    """Wait until the database has caught up with the writes just made; the seconds waited.

    PostgreSQL plans searches from its statistics and reads the visibility map in index-only
    scans: right after a bulk write both are stale until the `catalog-statistics` job or
    autovacuum comes round, and autovacuum's work competes for the same two cores. The query
    targets describe a catalog being read, so query latency is measured once that is done: the
    job's refresh is run now and autovacuum is waited for. SQLite has nothing to wait for.
    """
    if not url.startswith("postgresql"):
        return 0.0
    from sqlalchemy import text

    from registry.db import make_engine
    from registry.catalog.planner_statistics import PlannerStatistics

    engine = make_engine(url)
    t0 = time.perf_counter()
    try:
        PlannerStatistics(engine).refresh()
        busy = text("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' "
                    "AND datname = current_database()")
        quiet_since = None
        while time.perf_counter() - t0 < timeout:
            with engine.connect() as conn:
                running = conn.scalar(busy)
            now = time.perf_counter()
            quiet_since = (quiet_since or now) if not running else None
            if quiet_since is not None and now - quiet_since >= 1.0:
                break
            time.sleep(0.2)
    finally:
        engine.dispose()
    return time.perf_counter() - t0


def reset_postgres(url: str) -> None:
    from sqlalchemy import text

    from registry.db import make_engine

    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()


def cli(env: dict[str, str], *args: str) -> str:
    return subprocess.run([str(BIN / "agentdex"), *args], env=env, check=True, capture_output=True, text=True).stdout


def cpu_seconds(*markers: str) -> float:
    """User + system CPU of every process whose command line contains all of `markers` (from /proc)."""
    wanted = [marker.encode() for marker in markers]
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if all(marker in cmdline for marker in wanted):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime (man 5 proc: fields 14, 15)
        except (OSError, IndexError, ValueError):
            continue  # the process ended meanwhile
    return total / tick


def server_cpu_seconds(port: int) -> float:
    """CPU of the web server processes (`registry_server`) serving `port`."""
    return cpu_seconds("registry.wsgi:app", f"--port {port} ")


@contextlib.contextmanager
def registry_server(database_url: str, *, workers: int = 2, threads: int = 4) -> Iterator[tuple[int, str, dict[str, str]]]:
    """Migrate `database_url`, create a write token and run the registry as in production
    (`granian --interface wsgi --workers N registry.wsgi:app`); yield (port, token, env)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "bench-secret-key-0123456789",
               "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8", "AGENTDEX_ALLOW_HTTP": "true", "AGENTDEX_MAX_BODY_BYTES": str(64 << 20)}
        cli(env, "db", "upgrade")
        token = json.loads(cli(env, "tokens", "create", "bench", "--scope", "admin", "--json"))["token"]
        port = free_port()
        log = open(Path(tmp) / "server.log", "w")
        server = subprocess.Popen(
            [str(BIN / "granian"), "--interface", "wsgi", "--workers", str(workers), "--blocking-threads", str(threads),
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log", "registry.wsgi:app"],
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            _wait_until_up(port, server)
            yield port, token, env
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()


def start_worker(env: dict[str, str], *jobs: str) -> subprocess.Popen[bytes]:
    """`agentdex worker --job …` for these jobs at normal priority (the default lowers it for
    probes; what the benchmarks measure is latency-bound)."""
    args = [arg for job in jobs for arg in ("--job", job)]
    return subprocess.Popen([str(BIN / "agentdex"), "worker", *args, "--niceness", "0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextlib.contextmanager
def job_worker(env: dict[str, str], *jobs: str) -> Iterator[None]:
    """`start_worker`, stopped on the way out."""
    worker = start_worker(env, *jobs)
    try:
        yield
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def _wait_until_up(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the registry server exited during start-up")
        with contextlib.suppress(OSError):
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        time.sleep(0.1)
    raise RuntimeError("the registry server did not start within 60 s")
