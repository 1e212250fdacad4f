"""A2A benchmark: the registry's own agent finding agents (`find-agents`) over JSON-RPC and
HTTP+JSON, beside the REST search it runs (`GET /v1/agents`) with the same words, over the
realistic cards of bench/search_corpus.py at 10,000 agents, one request at a time; each row beside
the issue's target for it, and what the A2A layer adds to the REST search at the median.

    python bench/a2a.py                                   # SQLite, 10,000 agents
    python bench/a2a.py --keep /var/tmp/agentdex-search   # reuse (and keep) bench/search.py's files
    python bench/a2a.py --skip-sqlite --postgres postgresql+psycopg://postgres@127.0.0.1:5432/search_ranked

The corpora are bench/corpora.py's, kept and reused as bench/search.py's are. Times are the
server's: from sending the request to the last byte of the answer, on loopback, through one
kept-alive connection; the A2A requests and their REST twins are taken in turn, so noise falls on
both alike. Every A2A request makes a task, kept for GetTask: its write is part of the figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpora import SHAPE_HEADER, ShapeRow, add_corpus_options, measured_corpora, timed_in_turn  # noqa: E402
from bench.http_load import Http  # noqa: E402
from bench.search_corpus import Vocabulary  # noqa: E402

TARGETS = {("A2A JSON-RPC find-agents: 3 words", 10_000): (5.0, 15.0)}
LAYER_TARGET = 1.0  # ms the A2A layer may add to the REST search, at the median
WARM_UP = 5
V1 = {"A2A-Version": "1.0"}
Request = tuple[str, str, bytes | None, dict[str, str]]


@dataclasses.dataclass(frozen=True)
class Shape:
    """A kind of request: `request(words, tag)` is one, asking for those words or that tag."""

    name: str
    request: Callable[[str, str], Request]
    twin: str | None = None  # the REST request that runs the same search


def _message(text: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def _jsonrpc(text: str) -> Request:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": _message(text)}}
    return "POST", "/a2a/jsonrpc", orjson.dumps(body), V1


def _http_json(text: str) -> Request:
    return "POST", "/a2a/rest/message:send", orjson.dumps({"message": _message(text)}), V1


def _rest(**params: str) -> Request:
    return "GET", "/v1/agents?" + urlencode({**params, "limit": "10"}), None, {}


SHAPES = [
    Shape("REST search: 3 words", lambda words, tag: _rest(q=words)),
    Shape("A2A JSON-RPC find-agents: 3 words", lambda words, tag: _jsonrpc(words), "REST search: 3 words"),
    Shape("A2A HTTP+JSON find-agents: 3 words", lambda words, tag: _http_json(words), "REST search: 3 words"),
    Shape("REST search: a tag", lambda words, tag: _rest(tag=tag)),
    Shape("A2A JSON-RPC find-agents: tag:…", lambda words, tag: _jsonrpc(f"tag:{tag}"), "REST search: a tag"),
]
TWINS = {shape.name: shape.twin for shape in SHAPES}


def layer_lines(rows: list[ShapeRow]) -> list[str]:
    """What each A2A shape adds to its REST twin at the median."""
    by_name = {(row.database, row.agents, row.shape): row for row in rows}
    lines = []
    for shape in SHAPES:
        for row in rows:
            if shape.twin and row.shape == shape.name:
                added = row.p50 - by_name[(row.database, row.agents, shape.twin)].p50
                met = "yes" if added <= LAYER_TARGET else "NO"
                lines.append(
                    f"{row.database:<9} {row.agents:>8,} {shape.name:<38} {added:+.2f} ms at p50 over "
                    f"{shape.twin!r}  (target ≤{LAYER_TARGET:g} ms: {met})"
                )
    return lines


def _check(name: str, request: object, status: int, raw: bytes) -> None:
    answer = orjson.loads(raw) if status == 200 else None
    if TWINS[name] is None:
        ok = isinstance(answer, dict) and isinstance(answer.get("items"), list)
    else:
        task = (answer or {}).get("result", answer or {}).get("task", {})
        ok = task.get("status", {}).get("state") == "TASK_STATE_COMPLETED"
    if not ok:
        raise RuntimeError(f"{name}: {status} {raw[:300]!r}")


def measure(port: int, database: str, scale: int, vocab: Vocabulary, queries: int) -> list[ShapeRow]:
    """Each shape `queries` times, the shapes taken in turn with the same words for a pair of twins
    (`timed_in_turn`)."""
    http, content, tags = Http(port), vocab.content_words()[:1000], vocab.tags[:50]
    warm = random.Random("warm-up")
    for shape in SHAPES:
        for _ in range(WARM_UP):
            http.send(*shape.request(" ".join(warm.sample(content, 3)), warm.choice(tags)))
    asked = [(" ".join(rng.sample(content, 3)), rng.choice(tags)) for rng in map(random.Random, range(queries))]
    plans = {shape.name: [shape.request(words, tag) for words, tag in asked] for shape in SHAPES}
    latencies, steal, pace = timed_in_turn(http, plans, _check)
    return [
        ShapeRow(database, scale, name, times, steal, pace, TARGETS.get((name, scale), (None, None)))
        for name, times in latencies.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_options(parser, "10000")
    parser.add_argument("--queries", type=int, default=300, help="timed requests per shape")
    args = parser.parse_args()
    rows = measured_corpora(args, measure)
    print("\n" + SHAPE_HEADER)
    print("\n".join(row.line() for row in rows))
    print("\nthe A2A layer:")
    print("\n".join(layer_lines(rows)))
    print("\nstolen, loop ms: the machine's state (bench/common.py)")
    print(f"reproduce: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
