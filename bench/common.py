"""Shared pieces of the benchmarks: a registry server in a subprocess, the databases to run on,
latency statistics and the result table. The load generator is `bench.http_load`."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
        self.rows.append(
            (
                what,
                count,
                count / seconds if seconds else float("nan"),
                percentile(lat, 50) if lat else float("nan"),
                percentile(lat, 99) if lat else float("nan"),
                100 * stolen / total if total else float("nan"),
                reference_loop_ms(),
            )
        )
        print(f"  {what}: {count} in {seconds:.2f}s", flush=True)

    def print(self, command: str) -> None:
        print()
        print(f"{'what':<58} {'how many':>9} {'rate/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'stolen':>7} {'loop ms':>8}")
        for what, count, rate, p50, p99, steal, pace in self.rows:
            print(f"{what:<58} {count:>9} {rate:>9.0f} {p50:>8.2f} {p99:>8.2f} {steal:>6.0f}% {pace:>8.1f}")
        print(f"\nreproduce: {command}")


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


def run_on_each_database(
    parser: argparse.ArgumentParser, run: Callable[[str, str, argparse.Namespace, Table], None]
) -> None:
    """Parse the command line (with the database options), `run(url, label, args, table)` on each
    database, then print the table under the command that made it."""
    add_database_options(parser)
    args = parser.parse_args()
    table = Table()
    for url, label in each_database(args):
        run(url, label, args, table)
    table.print("python " + " ".join(sys.argv))


def in_process_services(url: str, **settings: Any) -> Any:
    """The registry's services on `url`, its schema brought up to date, in this process (benchmarks
    that time the services themselves, without HTTP): loopback allowed, semantic search off unless
    `settings` say otherwise. The caller closes them."""
    import ipaddress

    from registry.container import build_services
    from registry.db import make_engine
    from registry.migrate import upgrade
    from registry.settings import Settings

    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    defaults = {
        "secret_key": "bench-secret-key-0123456789",
        "allowed_networks": (ipaddress.ip_network("127.0.0.0/8"),),
        "search_semantic": False,
    }
    return build_services(Settings(database_url=url, **{**defaults, **settings}))


def settle(url: str, timeout: float = 120.0) -> float:
    """Wait until the database has caught up with the writes just made; the seconds waited.

    PostgreSQL plans searches from its statistics and reads the visibility map in index-only
    scans: right after a bulk write both are stale until autovacuum comes round, and autovacuum's work competes for the same two cores. The query
    targets describe a catalog being read, so query latency is measured once that is done: the
    search tables are vacuumed and analyzed now and autovacuum is waited for. SQLite has nothing to wait for.
    """
    if not url.startswith("postgresql"):
        return 0.0
    from sqlalchemy import text

    from registry.db import make_engine

    engine = make_engine(url)
    t0 = time.perf_counter()
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE agents, agent_terms, agent_search"))
        busy = text(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' "
            "AND datname = current_database()"
        )
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
def registry_server(
    database_url: str, *, workers: int = 2, threads: int = 4
) -> Iterator[tuple[int, str, dict[str, str]]]:
    """Migrate `database_url`, create a write token and run the registry as in production
    (`granian --interface wsgi --workers N registry.wsgi:app`); yield (port, token, env)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "AGENTDEX_DATABASE_URL": database_url,
            "AGENTDEX_SECRET_KEY": "bench-secret-key-0123456789",
            "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8",
            "AGENTDEX_ALLOW_HTTP": "true",
            "AGENTDEX_MAX_BODY_BYTES": str(64 << 20),
        }
        cli(env, "db", "upgrade")
        token = json.loads(cli(env, "tokens", "create", "bench", "--scope", "admin", "--json"))["token"]
        port = free_port()
        log = open(Path(tmp) / "server.log", "w")
        server = subprocess.Popen(
            [
                str(BIN / "granian"),
                "--interface",
                "wsgi",
                "--workers",
                str(workers),
                "--blocking-threads",
                str(threads),
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
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
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
    return subprocess.Popen(
        [str(BIN / "agentdex"), "worker", *args, "--niceness", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


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
