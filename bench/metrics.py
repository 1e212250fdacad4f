"""What the Prometheus metrics cost, and how fast /metrics answers on a large catalog.

Two registries run at once on one database, as in production (granian, two web processes):
one with AGENTDEX_METRICS=on and a shared AGENTDEX_METRICS_DIR (multiprocess mode, the slower
path), one with AGENTDEX_METRICS=off. Each round starts a fresh pair (so that a difference
between two particular sets of processes does not pass for the metrics' cost), registers cards
through both in short alternating blocks (one card per request over 8 connections) and times tag
searches on both, request by request in turn; the costs are medians of the paired figures, so a
burst of load from elsewhere on the machine falls on both alike. Then GET /metrics is timed on a
copy of the kept 100,000-agent corpus (bench/corpora.py's SQLite file), and the cost of one
recording call is timed in a process of its own.

    python bench/metrics.py                      # SQLite; targets: <= 3 % registrations, <= 0.2 ms search p50
    python bench/metrics.py --postgres postgresql+psycopg://postgres@127.0.0.1:55433/agentdex_t_metrics
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catalog import DOMAINS, items  # noqa: E402
from bench.common import ROOT, add_database_options, each_database, percentile, registry_server  # noqa: E402
from bench.http_load import Http, post_cards  # noqa: E402

CORPUS_100K = Path("/var/tmp/agentdex-ard-bench/search-100k.db")
REGISTRATION_TARGET = 3.0  # % of throughput
SEARCH_TARGET_MS = 0.2  # of p50
SCRAPE_TARGET_MS = 50.0
RECORD_CALL_US = 2.0  # one labelled counter increment in multiprocess mode (about half a request's)


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """`registry_server` passes this process's environment on: set what one server gets."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def two_servers(url: str, metrics_dir: Path, order: list[str]) -> Iterator[dict[str, tuple[int, str]]]:
    """{"on": (port, token), "off": (port, token)} on one database, started in `order`."""
    with contextlib.ExitStack() as stack:
        servers = {}
        for mode in order:
            with environment(AGENTDEX_METRICS=mode, AGENTDEX_METRICS_DIR=str(metrics_dir) if mode == "on" else ""):
                port, token, _env = stack.enter_context(registry_server(url, workers=2, threads=4))
            servers[mode] = (port, token)
        yield servers


def search_paths(rng: random.Random, count: int) -> list[str]:
    return [f"/v1/agents?tag={DOMAINS[rng.randrange(20)][rng.randrange(5)]}&limit=20" for _ in range(count)]


def timed_searches(servers: dict[str, tuple[int, str]], paths: list[str]) -> dict[str, list[float]]:
    """Each path on each server, the servers taken in turn request by request; ms."""
    connections = {mode: Http(port, token) for mode, (port, token) in servers.items()}
    latencies: dict[str, list[float]] = {mode: [] for mode in servers}
    for index, path in enumerate(paths):
        order = list(connections) if index % 2 == 0 else list(reversed(connections))
        for mode in order:
            t0 = time.perf_counter()
            status, _raw = connections[mode].send("GET", path)
            latencies[mode].append((time.perf_counter() - t0) * 1000)
            if status != 200:
                raise RuntimeError(f"search {path} answered {status}")
    for http in connections.values():
        http.close()
    return latencies


def overhead(url: str, label: str, args: argparse.Namespace) -> list[str]:
    rng = random.Random(35)
    registered: dict[str, list[float]] = {"on": [], "off": []}  # seconds per round
    reg_latencies: dict[str, list[float]] = {"on": [], "off": []}
    searches: dict[str, list[float]] = {"on": [], "off": []}
    round_p50s: list[float] = []  # on - off, ms
    next_card = 0
    for round_no in range(args.rounds):
        # A fresh pair of servers each round, started and measured in alternating order: a
        # difference between two particular sets of processes does not pass for the metrics' cost.
        order = ["on", "off"] if round_no % 2 == 0 else ["off", "on"]
        with tempfile.TemporaryDirectory() as metrics_dir, two_servers(url, Path(metrics_dir), order) as servers:
            if round_no == 0:
                post_cards(*servers["off"], items(rng, next_card, args.seed_cards), 8)  # something to search
                next_card += args.seed_cards
            for mode in order:  # each web process loads what it loads lazily before the clock runs
                post_cards(*servers[mode], items(rng, next_card, 40), 8)
                next_card += 40
            timed_searches(servers, search_paths(rng, 40))
            for block in range(args.blocks):  # short blocks, the two servers in turn: paired figures
                for mode in order if block % 2 == 0 else order[::-1]:
                    batch = items(rng, next_card, args.cards)
                    next_card += args.cards
                    seconds, latencies = post_cards(*servers[mode], batch, 8)
                    registered[mode].append(seconds)
                    reg_latencies[mode] += latencies
            timed = timed_searches(servers, search_paths(rng, args.searches))
            round_p50s.append(percentile(timed["on"], 50) - percentile(timed["off"], 50))
            for mode, times in timed.items():
                searches[mode] += times
            print(f"  {label} round {round_no + 1}/{args.rounds} done", flush=True)
    cards = args.cards * args.blocks * args.rounds
    rate = {mode: cards / sum(registered[mode]) for mode in registered}
    p50 = {mode: percentile(searches[mode], 50) for mode in searches}
    # Paired by block (each block ran both, in alternating order): the median block's cost.
    paired = [100 * (on - off) / on for on, off in zip(registered["on"], registered["off"], strict=True)]
    cost = percentile(paired, 50)
    extra = percentile(round_p50s, 50)
    rows = []
    for mode in ("off", "on"):
        rows.append(row(f"{label}: register, metrics {mode}", cards, rate[mode], reg_latencies[mode]))
        rows.append(row(f"{label}: search by tag, metrics {mode}", len(searches[mode]), None, searches[mode]))
    rows.append(
        f"{label}: registration throughput cost of metrics, median of {len(paired)} paired blocks: {cost:+.1f} %"
        f" (all rounds: {100 * (rate['off'] - rate['on']) / rate['off']:+.1f} %; target <= {REGISTRATION_TARGET} %)"
        f" {'yes' if cost <= REGISTRATION_TARGET else 'NO'}"
    )
    rows.append(
        f"{label}: search p50 cost of metrics, median of {args.rounds} paired rounds: {extra:+.3f} ms"
        f" (all rounds: {p50['on'] - p50['off']:+.3f} ms; target <= {SEARCH_TARGET_MS} ms)"
        f" {'yes' if extra <= SEARCH_TARGET_MS else 'NO'}"
    )
    return rows


RECORDING = """
import pathlib, sys, time
from registry.metrics.multiprocess import join
join(pathlib.Path(sys.argv[1]))
from sqlalchemy import create_engine
from registry.metrics.prometheus import PrometheusMetrics
metrics = PrometheusMetrics(pathlib.Path(sys.argv[1]))
engine = create_engine(f"sqlite:///{sys.argv[1]}/pool.db")
def per_call(action, n=3000, repeats=9):  # the fastest of several runs: the least disturbed one
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            action()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best
def lend():
    with engine.connect():
        pass
request = per_call(lambda: metrics.http_request("/v1/agents", "GET", 200, 0.002))
bare = per_call(lend)
metrics.watch_pool(engine, "main")
pool = per_call(lend) - bare
# How many checkouts a registration and a search make (each pays `pool` once).
import random
from sqlalchemy import event
from bench.catalog import items
from registry.app import create_app
from registry.container import build_services
from registry.migrate import upgrade
from registry.settings import Settings
from registry.settings_operations import OperationsSettings
url = f"sqlite:///{sys.argv[2]}/registry.db"
operations = OperationsSettings(metrics="on", metrics_dir=pathlib.Path(sys.argv[1]))
services = build_services(Settings(database_url=url, secret_key="k" * 32, search_semantic=False, operations=operations))
upgrade(services.engine)
auth = {"Authorization": "Bearer " + services.tokens.create("bench", ["admin"]).token}
client = create_app(services=services).test_client()
checkouts = [0]
event.listen(services.engine.pool, "checkout", lambda *_: checkouts.__setitem__(0, checkouts[0] + 1))
for item in items(random.Random(1), 0, 50):
    assert client.post("/v1/agents", json=item, headers=auth).status_code == 201
registration = checkouts[0] / 50
checkouts[0] = 0
for _ in range(50):
    assert client.get("/v1/agents?tag=d00-tag00&limit=20").status_code == 200
print(request, pool, registration, checkouts[0] / 50)
"""


def recording_cost() -> list[str]:
    """What recording costs per call, in multiprocess mode (values in shared files), timed in a
    process of its own: the figure the end-to-end comparison above is too noisy to resolve."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as database:
        done = subprocess.run(
            [sys.executable, "-c", RECORDING, scratch, database], capture_output=True, text=True, check=True, cwd=ROOT
        )
    request_us, pool_us, per_registration, per_search = (float(x) for x in done.stdout.split()[-4:])
    registration_us = request_us + 2 * RECORD_CALL_US + per_registration * pool_us
    return [
        f"recording one HTTP request (counter + histogram): {request_us:.1f} µs",
        f"pool gauges per connection checkout + checkin: {pool_us:.1f} µs",
        f"a registration records: the request, 2 counters, {per_registration:.1f} checkouts: ~{registration_us:.0f} µs",
        f"a search records: the request, {per_search:.1f} checkouts: ~{request_us + per_search * pool_us:.0f} µs",
    ]


def scrape_at_scale(corpus: Path, count: int) -> list[str]:
    """GET /metrics timed on a copy of a kept corpus (never the kept file itself)."""
    if not corpus.exists():
        return [f"/metrics at scale: skipped, no corpus at {corpus} (python bench/search.py --keep {corpus.parent})"]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / corpus.name
        for suffix in ("", "-wal"):
            if Path(f"{corpus}{suffix}").exists():
                shutil.copyfile(f"{corpus}{suffix}", f"{copy}{suffix}")
        with environment(AGENTDEX_METRICS="on", AGENTDEX_METRICS_DIR=str(Path(scratch) / "metrics")):
            with registry_server(f"sqlite:///{copy}", workers=2, threads=4) as (port, _token, _env):
                http = Http(port)
                t0 = time.perf_counter()
                status, raw = http.send("GET", "/metrics")
                first = [(time.perf_counter() - t0) * 1000]
                agents = sum(
                    float(line.rsplit(" ", 1)[1])
                    for line in raw.decode().splitlines()
                    if line.startswith("agentdex_agents{")
                )
                latencies = []
                for _ in range(count):
                    t0 = time.perf_counter()
                    status, raw = http.send("GET", "/metrics")
                    latencies.append((time.perf_counter() - t0) * 1000)
                    assert status == 200
                    time.sleep(0.4)  # as scrapes come: over 20 s, the figures are refreshed meanwhile
                http.close()
    met = "yes" if percentile(latencies, 50) <= SCRAPE_TARGET_MS else "NO"
    return [
        row(f"sqlite: first GET /metrics, {agents:,.0f} agents", 1, None, first) + "  (computes the GROUP BY)",
        row(f"sqlite: GET /metrics, {agents:,.0f} agents", count, None, latencies)
        + f"  target p50<={SCRAPE_TARGET_MS:g} ms {met}",
    ]


def row(what: str, count: int, rate: float | None, latencies: list[float]) -> str:
    shown = f"{rate:>9.0f}" if rate is not None else f"{'-':>9}"
    return f"{what:<46} {count:>9} {shown} {percentile(latencies, 50):>8.2f} {percentile(latencies, 99):>8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="rounds, each on a fresh pair of servers")
    parser.add_argument("--blocks", type=int, default=10, help="blocks of registrations per server and round")
    parser.add_argument("--cards", type=int, default=60, help="cards each server registers per block")
    parser.add_argument("--searches", type=int, default=200, help="searches on each server per round")
    parser.add_argument("--seed-cards", type=int, default=3000, help="cards registered before the rounds")
    parser.add_argument("--corpus", type=Path, default=CORPUS_100K, help="kept SQLite corpus for the /metrics timing")
    parser.add_argument("--scrapes", type=int, default=50, help="GET /metrics requests timed on the corpus")
    add_database_options(parser)
    args = parser.parse_args()
    lines = []
    for url, label in each_database(args):
        lines += overhead(url, label, args)
    lines += scrape_at_scale(args.corpus, args.scrapes)
    lines += recording_cost()
    print(f"\n{'what':<46} {'how many':>9} {'rate/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for line in lines:
        print(line)
    print(f"\nreproduce: python bench/metrics.py {' '.join(sys.argv[1:])}".rstrip())


if __name__ == "__main__":
    main()
