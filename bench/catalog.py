"""Catalog benchmark: registration (one card per request, and `agentdex import`), tag/text query
and tag-list latency at 10,000 and 100,000 agents, on SQLite and PostgreSQL, through the HTTP API.
A worker runs the `tag-counts` job beside the web processes, as deployed. Queries are timed once the database has caught up with the writes before
them (`settle`: on PostgreSQL the search tables are analyzed and autovacuum is waited for).

    python bench/catalog.py                              # SQLite, 10,000 and 100,000 agents
    python bench/catalog.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/bench
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    Table,
    add_database_options,
    cli,
    each_database,
    job_worker,
    registry_server,
    settle,
)
from bench.http_load import Http, post_cards  # noqa: E402

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu weather travel finance legal "
    "medical translate summarize search schedule invoice payroll recipe music video image code review "
    "deploy monitor alert support ticket booking flight hotel currency exchange tax audit contract"
).split()
DOMAINS = [[f"d{d:02d}-tag{t:02d}" for t in range(15)] for d in range(120)]
GENERIC = [f"generic-{g}" for g in ("assistant", "search", "chat", "data", "automation", "api")]


def zipf_index(rng: random.Random, n: int) -> int:
    """Index in [0, n) with a Zipf-like (s = 1) distribution: a few popular, a long tail."""
    return min(int(n ** rng.random()) - 1, n - 1)


def make_card(rng: random.Random, n: int) -> dict[str, Any]:
    """A realistic v1.0 card: 1–9 skills (5 on average), 2–4 tags per skill, drawn mostly from
    the agent's domain (domains and tags within them Zipf-distributed) plus a generic tag."""
    domain = DOMAINS[zipf_index(rng, len(DOMAINS))]
    skills = []
    for s in range(rng.randint(1, 9)):
        tags = {domain[zipf_index(rng, len(domain))] for _ in range(rng.randint(1, 3))}
        if rng.random() < 0.3:
            tags.add(rng.choice(GENERIC))
        skills.append(
            {
                "id": f"skill-{s}",
                "name": " ".join(rng.choices(WORDS, k=3)).title(),
                "description": " ".join(rng.choices(WORDS, k=20)),
                "tags": sorted(tags),
                "examples": [" ".join(rng.choices(WORDS, k=8))],
            }
        )
    return {
        "name": f"Agent {n} " + " ".join(rng.choices(WORDS, k=2)).title(),
        "description": " ".join(rng.choices(WORDS, k=40)),
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": f"https://agent{n}.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": "Bench Org", "url": "https://bench.example.com"},
        "capabilities": {"streaming": rng.random() < 0.5, "pushNotifications": rng.random() < 0.3},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
    }


def items(rng: random.Random, start: int, count: int) -> list[dict[str, Any]]:
    return [
        {"card": make_card(rng, n), "cardUrl": f"https://agent{n}.example.com/.well-known/agent-card.json"}
        for n in range(start, start + count)
    ]


def register_one_by_one(
    port: int, token: str, batch: list[dict[str, Any]], clients: int, table: Table, label: str
) -> None:
    seconds, latencies = post_cards(port, token, batch, clients)
    table.add(f"{label}: register, 1 card/request, {clients} connections", len(batch), seconds, latencies)


def import_file(
    env: dict[str, str], port: int, token: str, batch: list[dict[str, Any]], table: Table, label: str
) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        for item in batch:
            handle.write(json.dumps(item) + "\n")
    t0 = time.perf_counter()
    cli(
        {**env, "AGENTDEX_URL": f"http://127.0.0.1:{port}", "AGENTDEX_TOKEN": token},
        "import",
        handle.name,
        "--json",
        "--batch",
        "1000",
    )
    table.add(f"{label}: agentdex import (JSON Lines)", len(batch), time.perf_counter() - t0)
    Path(handle.name).unlink()


def query_latency(port: int, paths: list[str], table: Table, what: str) -> None:
    """Time each query from sending the request to the last byte of the answer, one connection,
    one query at a time. Decoding the answer is the client's work, done after the clock stops: a
    page of 50 agents is ~180 KB of JSON, which took this client 1.0–1.1 ms to decode. Every answer
    is still checked: status 200 and a JSON page of items; how many had at least one is printed."""
    http, latencies, found = Http(port), [], 0
    for path in paths[:20]:
        http.request("GET", path)  # warm-up
    for path in paths:
        t0 = time.perf_counter()
        status, raw = http.send("GET", path)
        latencies.append((time.perf_counter() - t0) * 1000)
        assert status == 200 and isinstance(items := json.loads(raw)["items"], list), (path, status, raw[:200])
        found += bool(items)
    print(f"  {what}: {found} of {len(paths)} answers held agents", flush=True)
    table.add(what, len(paths), sum(latencies) / 1000, latencies)


def tag_pairs(port: int, rng: random.Random, count: int) -> list[str]:
    """Pairs of the 60 most used tags. Most pairs come from different domains and share no agent:
    at 10,000 agents about a third of the answers hold agents (the count is printed), and a
    page of 50 agents costs several times an empty answer."""
    tags = [t["tag"] for t in Http(port).request("GET", "/v1/tags?limit=60")[1]["items"]]
    return [f"/v1/agents?tag={a}&tag={b}&match=all&limit=50" for a, b in (rng.sample(tags, 2) for _ in range(count))]


def text_queries(rng: random.Random, count: int) -> list[str]:
    return [f"/v1/agents?q={'+'.join(rng.sample(WORDS, rng.randint(1, 2)))}&limit=50" for _ in range(count)]


def tag_lists(count: int) -> list[str]:
    """`GET /v1/tags` as a catalog browser calls it: the most used tags, or those with a prefix."""
    return ["/v1/tags?limit=60" if n % 2 == 0 else f"/v1/tags?prefix=d{n % 120:02d}&limit=20" for n in range(count)]


def run(database_url: str, label: str, args: argparse.Namespace, table: Table) -> None:
    small, large, clients, queries = args.small, args.large, args.clients, args.queries
    rng = random.Random(7)
    server = registry_server(database_url, workers=args.server_workers, threads=args.server_threads)
    with server as (port, token, env), contextlib.ExitStack() as jobs:
        # As deployed, a worker folds the tag counts behind /v1/tags (`agentdex serve` runs the
        # same job in-process).
        jobs.enter_context(job_worker(env, "tag-counts"))
        register_one_by_one(port, token, items(rng, 0, small), clients, table, label)
        print(f"  {label}: database settled in {settle(database_url):.1f}s", flush=True)
        query_latency(port, tag_pairs(port, rng, queries), table, f"{label}: tag query, 2 tags, {small:,} agents")
        query_latency(port, text_queries(rng, queries), table, f"{label}: text query, {small:,} agents")
        query_latency(port, tag_lists(queries), table, f"{label}: tag list (60 most used), {small:,} agents")
        import_file(env, port, token, items(rng, small, small), table, label)
        remaining, start = large - 2 * small, 2 * small
        while remaining > 0:
            chunk = min(remaining, 20_000)
            import_file(env, port, token, items(rng, start, chunk), Table(), label)
            start, remaining = start + chunk, remaining - chunk
        print(f"  {label}: database settled in {settle(database_url):.1f}s", flush=True)
        query_latency(port, tag_pairs(port, rng, queries), table, f"{label}: tag query, 2 tags, {large:,} agents")
        query_latency(port, text_queries(rng, queries), table, f"{label}: text query, {large:,} agents")
        query_latency(port, tag_lists(queries), table, f"{label}: tag list (60 most used), {large:,} agents")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=16, help="client connections")
    parser.add_argument("--queries", type=int, default=1000)
    add_database_options(parser)
    parser.add_argument("--server-workers", type=int, default=2, help="web worker processes")
    parser.add_argument("--server-threads", type=int, default=8, help="request threads per web worker")
    args = parser.parse_args()
    table = Table()
    for url, label in each_database(args):
        run(url, label, args, table)
    table.print("python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
