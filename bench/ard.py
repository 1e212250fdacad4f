"""ARD benchmark: `POST /ard/search` (a 3-word query), `POST /ard/explore` (5 facets), `GET
/ard/agents` and `GET /.well-known/ard.json` over the realistic cards of bench/search_corpus.py at
10,000 and 100,000 agents, through the HTTP API, one request at a time; each row beside the issue's
target for it.

    python bench/ard.py                                   # SQLite, 10,000 and 100,000 agents
    python bench/ard.py --keep /var/tmp/agentdex-search   # reuse (and keep) bench/search.py's files
    python bench/ard.py --skip-sqlite --postgres postgresql+psycopg://postgres@127.0.0.1:5432/search_ranked

The corpora are bench/corpora.py's, kept and reused as bench/search.py's are: a database
loaded by one is reused by the other. The crawl figure (a manifest of 1,000 entries) is
bench/ard_crawl.py's.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpora import SHAPE_HEADER, Request, ShapeRow, add_corpus_options, measured_corpora, timed_in_turn  # noqa: E402
from bench.http_load import Http  # noqa: E402
from bench.search_corpus import Vocabulary  # noqa: E402

# The targets, (p50, p99) in ms, by (shape, agents).
TARGETS = {
    ("search: 3 words", 10_000): (5.0, 15.0),
    ("search: 3 words", 100_000): (None, 40.0),
    ("explore: 5 facets", 100_000): (None, 60.0),
    ("manifest: /.well-known/ard.json", 10_000): (None, 20.0),
}
FACETS = ["tags", "publisher", "inputModes", "outputModes", "health"]
WARM_UP = 5


@dataclasses.dataclass(frozen=True)
class Shape:
    """A kind of request: `request(rng)` is (method, path, body) of one."""

    name: str
    request: Callable[[random.Random], tuple[str, str, bytes | None]]


def shapes(vocab: Vocabulary) -> list[Shape]:
    content, tags = vocab.content_words()[:1000], vocab.tags[:50]

    def search(rng: random.Random, **extra: object) -> tuple[str, str, bytes | None]:
        query = {"text": " ".join(rng.sample(content, 3)), **extra}
        return "POST", "/ard/search", orjson.dumps({"query": query, "federation": "none"})

    def explore(rng: random.Random, text: bool) -> tuple[str, str, bytes | None]:
        body: dict[str, object] = {"resultType": {"facets": [{"field": f} for f in FACETS]}}
        if text:
            body["query"] = {"text": " ".join(rng.sample(content, 3))}
        return "POST", "/ard/explore", orjson.dumps(body)

    return [
        Shape("search: 3 words", search),
        Shape("search: 3 words + tags filter", lambda rng: search(rng, filter={"tags": rng.sample(tags, 2)})),
        Shape("explore: 5 facets", lambda rng: explore(rng, False)),
        Shape("explore: 5 facets of a 3-word query", lambda rng: explore(rng, True)),
        Shape("agents: a page of 20", lambda rng: ("GET", "/ard/agents?pageSize=20", None)),
        Shape("manifest: /.well-known/ard.json", lambda rng: ("GET", "/.well-known/ard.json", None)),
    ]


def measure(port: int, database: str, scale: int, vocab: Vocabulary, queries: int) -> list[ShapeRow]:
    """Each shape `queries` times, one request at a time, the shapes taken in turn
    (`timed_in_turn`); an answer other than 200 stops the run."""
    http, kinds = Http(port), shapes(vocab)
    for shape in kinds:
        rng = random.Random(f"warm-up {shape.name}")
        for _ in range(WARM_UP):
            http.send(*shape.request(rng))
    plans = {s.name: [s.request(random.Random(f"{s.name} {scale} {i}")) for i in range(queries)] for s in kinds}

    def check(name: str, request: Request, status: int, raw: bytes) -> None:
        if status != 200:
            method, path, body = request
            raise RuntimeError(f"{method} {path} {body!r}: {status} {raw[:300]!r}")

    latencies, steal, pace = timed_in_turn(http, plans, check)
    return [
        ShapeRow(database, scale, name, times, steal, pace, TARGETS.get((name, scale), (None, None)))
        for name, times in latencies.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_options(parser, "10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="timed requests per shape")
    args = parser.parse_args()
    rows = measured_corpora(args, measure)
    print("\n" + SHAPE_HEADER)
    print("\n".join(row.line() for row in rows))
    print("\nstolen, loop ms: the machine's state (bench/common.py)")
    print(f"reproduce: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
