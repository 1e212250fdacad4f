"""Manifest crawl benchmark (issue 30: "crawling a manifest of 1,000 entries served on loopback:
≥ 200 entries/s"): a domain registered through the HTTP API (`POST /v1/agents {"url": domain}`,
what `agentdex register https://example.com` sends), its ARD manifest crawled within the request,
end to end: the manifest found and read, every card fetched (by `url`) or taken inline (`data`),
validated, verified, endorsed, embedded and written, the listings kept. Then the same domain
crawled again: unchanged, and with a tenth of its entries changed, a tenth removed, a tenth new.

The publisher domains run in a process of their own (the stdlib HTTP/1.1 server of the crawl
tests, keep-alive), serving realistic cards (`bench.catalog.make_card`: 1–9 skills). The registry
runs as deployed (granian, 2 workers). Each row is `--runs` domains (a fresh one per run; rate =
entries / median seconds, p50/p99 over the runs' request times).

    python bench/ard_crawl.py                              # SQLite
    python bench/ard_crawl.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/bench
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catalog import make_card  # noqa: E402
from bench.common import Table, add_database_options, each_database, percentile, registry_server  # noqa: E402
from bench.http_load import Http  # noqa: E402
from tests.support.ard_publishers import ArdPublisher, entry  # noqa: E402

# -- the publisher process --------------------------------------------------------------------


class Domain:
    """One publisher domain and the entries its manifest lists (`inline` or by URL)."""

    def __init__(self, count: int, inline: bool, seed: int) -> None:
        self.publisher = ArdPublisher()
        self.inline = inline
        self.rng = random.Random(seed)
        self.entries = [self.entry(n) for n in range(count)]
        self.publisher.publish(self.entries)
        self.next = count

    def entry(self, n: int, version: int = 1) -> dict[str, Any]:
        card = make_card(self.rng, n)
        card["version"] = f"{version}.0.0"
        name = f"a{n}"
        if self.inline:
            return entry(self.publisher.urn(name), card["name"], data=card)
        url = self.publisher.put_json(f"/agents/{name}.json", card)
        return entry(self.publisher.urn(name), card["name"], url=url, version=card["version"])

    def churn(self, share: float) -> None:
        """Change, remove and add `share` of the entries each."""
        tenth = int(len(self.entries) * share)
        changed = [self.entry(int(e["identifier"].rsplit(":a", 1)[1]), 2) for e in self.entries[:tenth]]
        kept = self.entries[2 * tenth :]
        added = [self.entry(self.next + i) for i in range(tenth)]
        self.next += tenth
        self.entries = changed + kept + added
        self.publisher.publish(self.entries)


def serve(conn: Connection) -> None:
    """Answer the bench's commands: ("domain", count, inline) → its URL; ("churn", url, share)."""
    domains: dict[str, Domain] = {}
    while True:
        command, *args = conn.recv()
        if command == "domain":
            domain = Domain(args[0], args[1], seed=len(domains))
            domains[domain.publisher.domain] = domain
            conn.send(domain.publisher.domain)
        elif command == "churn":
            domains[args[0]].churn(args[1])
            conn.send("ok")
        else:
            for domain in domains.values():
                domain.publisher.close()
            conn.send("stopped")
            return


# -- the measurements -------------------------------------------------------------------------


def register(port: int, token: str, domain: str, expect: dict[str, int]) -> float:
    """Seconds of one `POST /v1/agents {"url": domain}`; checks the report's counts."""
    http = Http(port, token)
    t0 = time.perf_counter()
    status, body = http.request("POST", "/v1/agents", {"url": domain})
    seconds = time.perf_counter() - t0
    http.close()
    assert status in (200, 201), (status, str(body)[:500])
    report = body["manifest"]
    got = {key: report[key] if isinstance(report[key], int) else len(report[key]) for key in expect}
    assert got == expect and not report["refused"], (got, expect, report["refused"][:3])
    return seconds


def row(table: Table, what: str, entries: int, times: list[float]) -> None:
    median = percentile(times, 50)
    table.add(what, entries, median, [t * 1000 for t in times])


def run(url: str, label: str, args: argparse.Namespace, table: Table, publisher: Connection) -> None:
    n, runs = args.entries, args.runs
    tenth = n // 10
    with registry_server(url, workers=2, threads=8) as (port, token, _env):
        for inline in (False, True):
            how = "inline cards" if inline else "cards by url"
            domains, first, same, churned = [], [], [], []
            for _ in range(runs):
                publisher.send(("domain", n, inline))
                domains.append(publisher.recv())
            for domain in domains:
                first.append(register(port, token, domain, {"registered": n}))
            for domain in domains:
                same.append(register(port, token, domain, {"unchanged": n}))
            for domain in domains:
                publisher.send(("churn", domain, 0.1))
                publisher.recv()
                expect = {"registered": tenth, "updated": tenth, "deprecated": tenth, "unchanged": n - 2 * tenth}
                churned.append(register(port, token, domain, expect))
            row(table, f"{label}: register a domain, {n:,} {how}", n, first)
            row(table, f"{label}: crawl it again, unchanged", n, same)
            row(table, f"{label}: again, 10% changed, 10% removed, 10% new", n, churned)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000, help="entries per manifest")
    parser.add_argument("--runs", type=int, default=3, help="domains per row")
    add_database_options(parser)
    args = parser.parse_args()
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(theirs,), daemon=True)
    server.start()
    table = Table()
    try:
        for url, label in each_database(args):
            run(url, label, args, table, ours)
    finally:
        ours.send(("stop",))
        ours.recv()
        server.join(timeout=10)
    table.print("python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
