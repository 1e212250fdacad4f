"""Health-probe benchmark: 10,000 registered agents served by a loopback farm, probed by one
`agentdex worker` (SQLite, and PostgreSQL with --postgres) and by two at once (PostgreSQL), with
catalog query latency measured while idle and during the sweep.

    python bench/health.py                                   # SQLite, one worker
    python bench/health.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/bench

The farm is one separate process of asyncio servers on several ports, each answering every
JSON-RPC call on any path with -32001 (task not found) on kept-alive connections, as a live A2A
agent does. Workers run as deployed (`agentdex worker`, niceness 10 by default; `--niceness 0`
measures them at the web processes' priority). Every run stops by itself: the workers run
`--once` (until nothing is due), under a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import BIN, Table, add_database_options, percentile, registry_server, reset_postgres  # noqa: E402
from bench.http_load import Http  # noqa: E402

TAGS = [f"tag{i:02d}" for i in range(40)]
WORDS = "weather travel finance legal medical translate summarize search schedule invoice".split()
WORKER_TIMEOUT = 300


# -- the farm -------------------------------------------------------------------------------


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length) if length else b""
            try:
                request_id = json.loads(body).get("id")
            except (ValueError, AttributeError):
                request_id = None
            payload = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32001, "message": "Task not found"}}
            ).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (len(payload), payload)
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, asyncio.CancelledError):
        pass  # the client closed the connection, or the farm is shutting down
    finally:
        writer.close()


def _farm(port_count: int, ports: Any, stop: Any) -> None:
    async def main() -> None:
        servers = [await asyncio.start_server(_answer, "127.0.0.1", 0, backlog=1024) for _ in range(port_count)]
        for server in servers:
            ports.put(server.sockets[0].getsockname()[1])
        while not stop.is_set():
            await asyncio.sleep(0.2)

    asyncio.run(main())


class Farm:
    """`port_count` asyncio servers in a child process; agents are spread over ports and paths."""

    def __init__(self, port_count: int) -> None:
        self._ports_queue: Any = multiprocessing.Queue()
        self._stop = multiprocessing.Event()
        self._process = multiprocessing.Process(
            target=_farm, args=(port_count, self._ports_queue, self._stop), daemon=True
        )
        self._process.start()
        self.ports = [self._ports_queue.get(timeout=30) for _ in range(port_count)]

    def url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.ports[n % len(self.ports)]}/agents/{n}/a2a"

    def close(self) -> None:
        self._stop.set()
        self._process.join(timeout=10)


# -- agents and queries ---------------------------------------------------------------------


def card(rng: random.Random, n: int, url: str) -> dict[str, Any]:
    return {
        "name": f"Agent {n} {rng.choice(WORDS).title()}",
        "description": " ".join(rng.choices(WORDS, k=12)),
        "version": "1.0.0",
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": f"s{s}",
                "name": f"Skill {s}",
                "description": " ".join(rng.choices(WORDS, k=8)),
                "tags": rng.sample(TAGS, 3),
            }
            for s in range(rng.randint(1, 4))
        ],
    }


def register(port: int, token: str, farm: Farm, count: int) -> None:
    rng, http = random.Random(5), Http(port, token)
    for start in range(0, count, 1000):
        items = [
            {"card": card(rng, n, farm.url(n)), "cardUrl": f"https://agent{n}.example.com/.well-known/agent-card.json"}
            for n in range(start, min(count, start + 1000))
        ]
        status, body = http.request("POST", "/v1/agents/import", {"items": items})
        if status != 200 or body["failed"]:
            raise RuntimeError(f"import failed: {status} {str(body)[:300]}")


def query_paths(rng: random.Random) -> list[str]:
    return [
        f"/v1/agents?tag={rng.choice(TAGS)}&limit=20" if i % 2 else f"/v1/agents?q={rng.choice(WORDS)}&limit=20"
        for i in range(2000)
    ]


class Querier(threading.Thread):
    """Sends catalog queries one after another until stopped, recording their latency in ms."""

    def __init__(self, port: int, paths: list[str]) -> None:
        super().__init__(daemon=True)
        self._http = Http(port)
        self._paths = paths
        self.latencies: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        index = 0
        while not self.stop.is_set():
            t0 = time.perf_counter()
            status, _ = self._http.request("GET", self._paths[index % len(self._paths)])
            self.latencies.append((time.perf_counter() - t0) * 1000)
            assert status == 200
            index += 1
            self.stop.wait(0.01)  # a steady trickle of users, not a load test of its own


def idle_queries(port: int, paths: list[str], count: int) -> list[float]:
    querier = Querier(port, paths)
    for path in paths[:20]:
        querier._http.request("GET", path)  # warm-up
    querier.start()
    while len(querier.latencies) < count:
        time.sleep(0.05)
    querier.stop.set()
    querier.join()
    return querier.latencies


# -- sweeps ---------------------------------------------------------------------------------


def sweep(
    env: dict[str, str], port: int, paths: list[str], workers: int, threads: int, niceness: int
) -> tuple[float, list[float], list[str]]:
    """Run `workers` `agentdex worker --once` processes at once; return wall seconds, query latencies
    during the sweep, and each worker's JSON report."""
    querier = Querier(port, paths)
    querier.start()
    command = [
        str(BIN / "agentdex"),
        "worker",
        "--once",
        "--job",
        "health-probe",
        "--json",
        "--niceness",
        str(niceness),
    ]
    worker_env = {**env, "AGENTDEX_WORKER_THREADS": str(threads)}
    t0 = time.perf_counter()
    processes = [
        subprocess.Popen(command, env=worker_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for _ in range(workers)
    ]
    outputs = [p.communicate(timeout=WORKER_TIMEOUT)[0] for p in processes]
    seconds = time.perf_counter() - t0
    querier.stop.set()
    querier.join()
    if any(p.returncode for p in processes):
        raise RuntimeError(f"a worker failed: {outputs}")
    return seconds, querier.latencies, outputs


def probe_stats(database_url: str) -> tuple[int, float, list[float]]:
    """(checks, seconds from the first to the last check, latencies in ms) from health_checks."""
    from sqlalchemy import func, select

    from registry.db import make_engine
    from registry.schema import HealthCheck

    engine = make_engine(database_url)
    with engine.connect() as conn:
        first, last, count = conn.execute(
            select(func.min(HealthCheck.checked_at), func.max(HealthCheck.checked_at), func.count())
        ).one()
        latencies = [float(v) for v in conn.scalars(select(HealthCheck.latency_ms)) if v is not None]
        outcomes = dict(conn.execute(select(HealthCheck.outcome, func.count()).group_by(HealthCheck.outcome)).all())
    engine.dispose()
    if outcomes.get("down") or outcomes.get("degraded"):
        print(f"  note: outcomes {outcomes}", flush=True)
    span = (last - first).total_seconds() if count else 0.0
    return int(count), span, latencies


def run(database_url: str, label: str, agents: int, workers: int, args: argparse.Namespace, table: Table) -> None:
    threads, niceness = args.threads, args.niceness
    farm = Farm(args.ports)
    try:
        with registry_server(database_url) as (port, token, env):
            register(port, token, farm, agents)
            paths = query_paths(random.Random(9))
            idle = idle_queries(port, paths, 300)
            table.add(f"{label}: catalog query, idle", len(idle), sum(idle) / 1000, idle)
            seconds, during, outputs = sweep(env, port, paths, workers, threads, niceness)
            count, span, latencies = probe_stats(database_url)
            reports = [json.loads(o)[0] for o in outputs]
            who = "+".join(str(r["recorded"]) for r in reports)
            table.add(
                f"{label}: probes, {workers} worker(s) x {threads} thr, nice {niceness} ({who})", count, span, latencies
            )
            table.add(f"{label}:   same sweep, wall clock incl. start-up", count, seconds)
            table.add(
                f"{label}: catalog query, during the sweep", len(during), sum(during) / 1000 if during else 0, during
            )
            ratio = percentile(during, 50) / percentile(idle, 50) if during else float("nan")
            print(
                f"  {label}: query p50 during/idle = {ratio:.2f}x; all {agents} probed: {count == agents}", flush=True
            )
    finally:
        farm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=32, help="AGENTDEX_WORKER_THREADS of each worker")
    parser.add_argument("--ports", type=int, default=16, help="listening ports of the farm")
    parser.add_argument("--niceness", type=int, default=10, help="`agentdex worker --niceness` (its default)")
    add_database_options(parser)
    args = parser.parse_args()
    table = Table()
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            run(f"sqlite:///{tmp}/bench.db", "sqlite", args.agents, 1, args, table)
    if args.postgres:
        for workers in (1, 2):
            reset_postgres(args.postgres)
            run(args.postgres, "postgres", args.agents, workers, args, table)
    table.print("python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
