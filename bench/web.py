"""Web catalog benchmark: the home page (a query of 1-3 words with 3 facets chosen), an agent page,
/tags and /status, served by the registry as in production over the realistic cards of
bench/search_corpus.py at 10,000 and 100,000 agents, one request at a time; each row beside the
issue's target for it. Then Lighthouse (accessibility, best-practices) on the home page with a
query and on an agent page (the issue's targets), and on /tags and /status, with every audit that
cost points.

    python bench/web.py --keep /var/tmp/agentdex-ard-bench \\
        --postgres postgresql+psycopg://postgres@127.0.0.1:55433/agentdex_t_ard_bench
    python bench/web.py --scales 10000 --no-lighthouse          # the times only

Times are the server's: each request is sent over one kept-alive loopback connection to the
registry (granian, as `registry_server` runs it) and timed from sending it to the last byte of
the answer, the shapes taken in turn (`timed_in_turn`), so what is left besides the server's own
work is a loopback round trip (tens of microseconds). The row "its search alone" sends each home
page's words and facets to `GET /v1/agents`: the catalog's search without the facet counts and the
page around it, so the difference is what the page adds. The corpora are bench/corpora.py's, kept and
reused. Lighthouse 12.2.3 (`npm i -E`, into ~/.cache/agentdex-bench/lighthouse on first use) runs
Debian's Chromium headless (CHROME_PATH, default /usr/bin/chromium) on the scales of
--lighthouse-scales; its scores are from one run each (they do not vary with load).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpora import SHAPE_HEADER, Request, ShapeRow, add_corpus_options, measured_corpora, timed_in_turn  # noqa: E402
from bench.http_load import Http  # noqa: E402
from bench.search_corpus import Vocabulary  # noqa: E402

HOME = "home: 1-3 words + 3 facets"
AGENT = "agent page"
REST_TWIN = "  its search alone: GET /v1/agents"
# The targets, (p50, p99) in ms, by (shape, agents).
TARGETS = {(HOME, 10_000): (15.0, 40.0), (HOME, 100_000): (None, 80.0), (AGENT, 10_000): (None, 20.0)}
LIGHTHOUSE = "12.2.3"
LIGHTHOUSE_DIR = Path.home() / ".cache" / "agentdex-bench" / "lighthouse"
LIGHTHOUSE_TARGET = 0.95
CATEGORIES = ("accessibility", "best-practices")
BROWSER = {"Accept": "text/html,application/xhtml+xml", "Accept-Language": "en"}
WARM_UP = 5
SAMPLED_AGENTS = 200


def agent_ids(http: Http, vocab: Vocabulary, count: int) -> list[str]:
    """Ids of agents found by searching random words, so the agent pages are spread over the
    catalog rather than its first registrations."""
    rng, ids = random.Random("agent pages"), {}  # ordered, without repeats
    for word in rng.sample(vocab.content_words()[:1000], 400):
        status, raw = http.send("GET", "/v1/agents?" + urlencode({"q": word, "limit": "5"}))
        if status == 200:
            ids.update(dict.fromkeys(item["id"] for item in json.loads(raw)["items"]))
        if len(ids) >= count:
            break
    if not ids:
        raise RuntimeError("no agent found to open pages of")
    return list(ids)


def plans(vocab: Vocabulary, ids: list[str], queries: int, scale: int) -> dict[str, list[Request]]:
    content, tags = vocab.content_words()[:1000], vocab.tags[:50]

    def search(rng: random.Random, names: tuple[str, str, str]) -> str:
        """1-3 words and 3 facets a person might tick (a tag, streaming, JSON output), in the
        parameter `names` of the page or of the API."""
        words = " ".join(rng.sample(content, rng.randint(1, 3)))
        facets = zip(names, (rng.choice(tags), "streaming", "application/json"))
        return urlencode([("q", words), *facets])

    shapes: dict[str, Callable[[random.Random], Request]] = {
        HOME: lambda rng: ("GET", "/?" + search(rng, ("tag", "cap", "output")), None, BROWSER),
        # The same search without facet counts or a page around it: what the catalog takes alone.
        REST_TWIN: lambda rng: (
            "GET",
            "/v1/agents?limit=20&" + search(rng, ("tag", "capability", "outputMode")),
            None,
            {},
        ),
        AGENT: lambda rng: ("GET", f"/agents/{rng.choice(ids)}", None, BROWSER),
        "tags page": lambda rng: ("GET", "/tags", None, BROWSER),
        "status page": lambda rng: ("GET", "/status", None, BROWSER),
    }
    twins = {REST_TWIN: HOME}  # the same words and facets, request by request
    return {
        name: [make(random.Random(f"{twins.get(name, name)} {scale} {i}")) for i in range(queries)]
        for name, make in shapes.items()
    }


def _check(name: str, request: Request, status: int, raw: bytes) -> None:
    if name == REST_TWIN:
        if status != 200 or not raw.startswith(b"{"):
            raise RuntimeError(f"{name}: GET {request[1]}: {status} {raw[:300]!r}")
    elif status != 200 or b"<html" not in raw[:500].lower():
        raise RuntimeError(f"{name}: GET {request[1]}: {status} {raw[:300]!r}")


def measure_pages(port: int, database: str, scale: int, vocab: Vocabulary, queries: int) -> list[ShapeRow]:
    """Each page `queries` times, one request at a time, the pages taken in turn."""
    http = Http(port)
    planned = plans(vocab, agent_ids(http, vocab, SAMPLED_AGENTS), queries, scale)
    for requests in planned.values():
        for request in requests[:WARM_UP]:
            http.send(*request)
    latencies, steal, pace = timed_in_turn(http, planned, _check)
    return [
        ShapeRow(database, scale, name, times, steal, pace, TARGETS.get((name, scale), (None, None)))
        for name, times in latencies.items()
    ]


# -- Lighthouse ------------------------------------------------------------------------------


@dataclasses.dataclass
class LighthouseRun:
    database: str
    agents: int
    page: str
    url: str
    scores: dict[str, float]
    lost: list[str]  # "category: audit id (score): title" of every weighted audit below 1

    def line(self) -> str:
        shown = "  ".join(f"{self.scores.get(name, float('nan')) * 100:>{len(name)}.0f}" for name in CATEGORIES)
        met = "yes" if all(self.scores.get(name, 0) >= LIGHTHOUSE_TARGET for name in CATEGORIES) else "NO"
        return f"{self.database:<9} {self.agents:>8,} {self.page:<34} {shown}  {met}"


def lighthouse_cli() -> Path:
    """Lighthouse's CLI script, installed into the cache on first use (pinned, exact version)."""
    script = LIGHTHOUSE_DIR / "node_modules" / "lighthouse" / "cli" / "index.js"
    if not script.exists():
        if shutil.which("npm") is None:
            raise RuntimeError("Lighthouse needs Node.js with npm (Node 20)")
        LIGHTHOUSE_DIR.mkdir(parents=True, exist_ok=True)
        print(f"  installing lighthouse@{LIGHTHOUSE} into {LIGHTHOUSE_DIR}", flush=True)
        subprocess.run(
            ["npm", "i", "-E", "--no-audit", "--no-fund", f"lighthouse@{LIGHTHOUSE}"], cwd=LIGHTHOUSE_DIR, check=True
        )
    return script


def lighthouse(url: str) -> tuple[dict[str, float], list[str]]:
    """(score by category, the audits that cost points) of one Lighthouse run on `url`."""
    flags = "--headless=new" + (" --no-sandbox" if os.geteuid() == 0 else "")  # Chromium refuses root otherwise
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
    command = [
        "node",
        str(lighthouse_cli()),
        url,
        f"--only-categories={','.join(CATEGORIES)}",
        "--output=json",
        "--output-path=stdout",
        "--quiet",
        f"--chrome-flags={flags}",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    return {name: report["categories"][name]["score"] for name in CATEGORIES}, _lost_points(report)


def _lost_points(report: dict[str, Any]) -> list[str]:
    audits, lost = report["audits"], []
    for name in CATEGORIES:
        for ref in report["categories"][name]["auditRefs"]:
            audit = audits[ref["id"]]
            if ref["weight"] > 0 and audit["score"] is not None and audit["score"] < 1:
                lost.append(f"{name}: {ref['id']} ({audit['score']:g}): {audit['title']}")
    return lost


def measure_lighthouse(port: int, database: str, scale: int, vocab: Vocabulary) -> list[LighthouseRun]:
    http = Http(port)
    query = " ".join(vocab.content_words()[:2])
    agent = agent_ids(http, vocab, 1)[0]
    http.close()
    pages = {
        f"home: ?q={query}": "/?" + urlencode({"q": query}),
        "agent page": f"/agents/{agent}",
        "tags page": "/tags",  # no target; audited so that a lapse shows
        "status page": "/status",
    }
    runs = []
    for page, path in pages.items():
        url = f"http://127.0.0.1:{port}{path}"
        scores, lost = lighthouse(url)
        runs.append(LighthouseRun(database, scale, page, url, scores, lost))
        print(f"  lighthouse {page}: {scores}", flush=True)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_options(parser, "10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="timed requests per page")
    parser.add_argument("--lighthouse-scales", default="10000", help="scales to run Lighthouse on, comma-separated")
    parser.add_argument("--no-lighthouse", action="store_true")
    args = parser.parse_args()
    audited = set() if args.no_lighthouse else {int(s) for s in args.lighthouse_scales.split(",")}
    runs: list[LighthouseRun] = []

    def measure(port: int, database: str, scale: int, vocab: Vocabulary, queries: int) -> list[ShapeRow]:
        rows = measure_pages(port, database, scale, vocab, queries)
        if scale in audited:
            runs.extend(measure_lighthouse(port, database, scale, vocab))
        return rows

    rows = measured_corpora(args, measure)
    print("\n" + SHAPE_HEADER)
    print("\n".join(row.line() for row in rows))
    print("\nstolen, loop ms: the machine's state (bench/common.py)")
    if runs:
        print(f"\nLighthouse {LIGHTHOUSE} (target ≥ {LIGHTHOUSE_TARGET * 100:.0f} in each category)")
        print(f"{'database':<9} {'agents':>8} {'page':<34} {'  '.join(CATEGORIES)}  met")
        print("\n".join(run.line() for run in runs))
        for run in runs:
            for audit in run.lost:
                print(f"  lost points: {run.database} {run.agents:,} {run.page}: {audit}")
    print(f"\nreproduce: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
