"""What the Prometheus metrics cost, and how fast /metrics answers on a large catalog.

Two registries run at once on one database, as in production (granian, two web processes):
one with AGENTDEX_METRICS=on and a shared AGENTDEX_METRICS_DIR (multiprocess mode, the slower
path), one with AGENTDEX_METRICS=off. Rounds alternate which goes first; each round registers a
batch of cards through each (one card per request over several connections) and times tag
searches on each, the two servers taken request by request, so that the machine's drift falls
on both alike. Then GET /metrics is timed on a copy of the kept 100,000-agent corpus
(bench/corpora.py's SQLite file; one GROUP BY over the agents per scrape).

    python bench/metrics.py                      # SQLite; targets: <= 3 % registrations, <= 0.2 ms search p50
    python bench/metrics.py --postgres postgresql+psycopg://postgres@127.0.0.1:55433/agentdex_t_metrics_bench
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
            for mode in order:
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
    rate = {mode: args.cards * args.rounds / sum(registered[mode]) for mode in registered}
    p50 = {mode: percentile(searches[mode], 50) for mode in searches}
    # Paired by round (each round ran both, in alternating order): the median round's cost.
    paired = [100 * (on - off) / on for on, off in zip(registered["on"], registered["off"], strict=True)]
    cost = percentile(paired, 50)
    extra = percentile(round_p50s, 50)
    rows = []
    for mode in ("off", "on"):
        rows.append(
            row(f"{label}: register, metrics {mode}", args.cards * args.rounds, rate[mode], reg_latencies[mode])
        )
        rows.append(row(f"{label}: search by tag, metrics {mode}", len(searches[mode]), None, searches[mode]))
    rows.append(
        f"{label}: registration throughput cost of metrics, median of {args.rounds} paired rounds: {cost:+.1f} %"
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
def per_call(action, n=20000):
    t0 = time.perf_counter()
    for _ in range(n):
        action()
    return (time.perf_counter() - t0) / n * 1e6
def lend():
    with engine.connect():
        pass
request = per_call(lambda: metrics.http_request("/v1/agents", "GET", 200, 0.002))
bare = per_call(lend)
metrics.watch_pool(engine, "main")
print(request, per_call(lend) - bare)
"""


def recording_cost() -> list[str]:
    """What recording costs per call, in multiprocess mode (values in shared files), timed in a
    process of its own: the figure the end-to-end comparison above is too noisy to resolve."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, "-c", RECORDING, scratch], capture_output=True, text=True, check=True, cwd=ROOT
        )
    request_us, pool_us = (float(x) for x in done.stdout.split())
    return [
        f"recording one HTTP request (counter + histogram): {request_us:.1f} µs",
        f"pool gauges per connection checkout + checkin: {pool_us:.1f} µs",
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
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (metrics on / off)")
    parser.add_argument("--cards", type=int, default=300, help="cards each server registers per round")
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
