"""Embedding benchmark: what semantic search costs in `registry.retrieval` — loading the model,
embedding cards and queries, and searching the in-process vector index.

    python bench/embedding.py
    python bench/embedding.py --calls 5000 --batches 100 --searches 100 --loads 9

Rows: the model's load in a fresh process (import of wordllama and its weights, timed from the
first `embed`), run --loads times; one real card's text (name, description, skill names,
descriptions, tags and examples of the cards of bench/relevance/cards/ whose text is 60-150
words) embedded one at a time and in batches of 100, with wordllama's own `embed` on the same
texts for reference; a short query; then `VectorIndex.nearest` with k=200 over 10,000, 100,000
and 1,000,000 random packed vectors (and among 5,000 of the 100,000), with upserting them. Times
are wall clock, and for batches p50/p99 are per card; the targets add CPU per card, which counts
the tokenizer's own threads.
Targets: embedding ≤ 0.2 ms per card; the index of 100,000 agents ≤ 64 MiB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, Table, percentile  # noqa: E402
from bench.relevance.dataset import card_text  # noqa: E402
from bench.relevance.semantic import rss_bytes  # noqa: E402
from registry.retrieval.embedding import DIMENSIONS, WordLlamaEmbedder, pack  # noqa: E402
from registry.retrieval.vectors import VectorIndex  # noqa: E402

CARDS = ROOT / "bench" / "relevance" / "cards"
QUERIES = ["convert euros to yen", "book a flight to Tokyo", "summarise a pdf", "weather in Lisbon tomorrow"]
TARGET_CARD_MS, TARGET_INDEX_MIB = 0.2, 64
MIB = 1024 * 1024


def card_texts(low: int = 60, high: int = 150) -> list[str]:
    """Texts of the benchmark's real cards that run to about a hundred words."""
    texts = [card_text(json.loads(path.read_text())) for path in sorted(CARDS.glob("*.json"))]
    return [text for text in texts if low <= len(text.split()) <= high]


def probe_load() -> None:
    """In a fresh process: seconds and RSS growth of the first `embed`, as JSON on stdout."""
    before, start = rss_bytes(), time.perf_counter()
    WordLlamaEmbedder().embed(["warm up"])
    print(json.dumps({"seconds": time.perf_counter() - start, "rss": rss_bytes() - before}))


def measure_loads(table: Table, runs: int) -> list[int]:
    """Model load in `runs` fresh processes; their RSS growths."""
    seconds, growths = [], []
    for _ in range(runs):
        child = subprocess.run(
            [sys.executable, __file__, "--probe-load"], capture_output=True, text=True, check=True, cwd=ROOT
        )
        probe = json.loads(child.stdout)
        seconds.append(probe["seconds"])
        growths.append(probe["rss"])
    table.add("load model, fresh process (import + weights)", runs, sum(seconds), [s * 1000 for s in seconds])
    return growths


@dataclasses.dataclass
class Timing:
    latencies_ms: list[float]  # wall clock, per item
    cpu_ms: float  # CPU of the whole process (the tokenizer's own threads too), per item


def time_calls(table: Table, what: str, calls: int, call: Callable[[int], object], per_call: int = 1) -> Timing:
    """`call(i)` `calls` times after a warm-up, a call handling `per_call` items."""
    for i in range(min(calls, 5)):
        call(i)
    latencies, start, cpu_start = [], time.perf_counter(), time.process_time()
    for i in range(calls):
        t0 = time.perf_counter()
        call(i)
        latencies.append((time.perf_counter() - t0) * 1000 / per_call)
    cpu_ms = (time.process_time() - cpu_start) * 1000 / (calls * per_call)
    table.add(what, calls * per_call, time.perf_counter() - start, latencies)
    return Timing(latencies, cpu_ms)


def measure_embedding(table: Table, calls: int, batches: int) -> dict[str, Timing]:
    texts = card_texts()
    words = sum(len(text.split()) for text in texts) / len(texts)
    print(f"{len(texts)} card texts of 60-150 words (mean {words:.0f})", flush=True)
    ours, reference = WordLlamaEmbedder(), _wordllama_reference()
    batch = list(islice(cycle(texts), 100))
    one = time_calls(table, "embed one card", calls, lambda i: ours.embed([texts[i % len(texts)]]))
    hundred = time_calls(table, "embed cards in batches of 100 (per card)", batches, lambda i: ours.embed(batch), 100)
    time_calls(table, "  wordllama's own embed, one card", calls, lambda i: reference.embed([texts[i % len(texts)]]))
    time_calls(table, "  wordllama's own embed, batches of 100", batches, lambda i: reference.embed(batch), 100)
    time_calls(table, "embed one query", calls, lambda i: ours.embed([QUERIES[i % len(QUERIES)]]))
    return {"one card": one, "batches of 100": hundred}


def _wordllama_reference() -> Any:
    import wordllama

    return wordllama.WordLlama.load(
        "l2_supercat", dim=DIMENSIONS, cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )


def random_units(count: int, rng: numpy.random.Generator) -> numpy.ndarray:
    vectors = rng.standard_normal((count, DIMENSIONS), dtype=numpy.float32)
    return vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)


def filled_index(table: Table, count: int, rng: numpy.random.Generator) -> VectorIndex:
    """An index of `count` random unit vectors, upserted 100,000 at a time (the upsert timed)."""
    index, seconds = VectorIndex(DIMENSIONS), 0.0
    for start in range(0, count, 100_000):
        size = min(100_000, count - start)
        rows = list(zip(range(start, start + size), pack(random_units(size, rng))))
        t0 = time.perf_counter()
        index.upsert(rows)
        seconds += time.perf_counter() - t0
    table.add(f"upsert {count:,} packed vectors, 100,000 a call", count, seconds)
    return index


def measure_index(table: Table, searches: int, sizes: list[int]) -> dict[int, int]:
    """`nearest` at each index size; the index's nbytes by size."""
    rng = numpy.random.default_rng(11)
    queries = random_units(searches, rng)
    return {count: measure_index_of(table, count, queries, rng) for count in sizes}


def measure_index_of(table: Table, count: int, queries: numpy.ndarray, rng: numpy.random.Generator) -> int:
    """`nearest` over `count` vectors (and among 5,000 of them at 100,000); the index's nbytes."""
    index = filled_index(table, count, rng)
    searches = len(queries)
    time_calls(table, f"nearest k=200 over {count:,}", searches, lambda i: index.nearest(queries[i], 200))
    if count == 100_000:
        among = set(rng.choice(count, 5000, replace=False).tolist())
        what = "nearest k=200 among 5,000 of 100,000"
        time_calls(table, what, searches, lambda i: index.nearest(queries[i], 200, among))
    return index.nbytes


def print_targets(embedding: dict[str, Timing], nbytes: dict[int, int], growths: list[int]) -> None:
    print("\ntargets:")
    for what, timing in embedding.items():
        p50 = percentile(timing.latencies_ms, 50)
        verdict = "met" if p50 <= TARGET_CARD_MS else "MISSED"
        print(
            f"  embed {what}: p50 {p50:.3f} ms per card, CPU {timing.cpu_ms:.3f} ms per card "
            f"(target ≤ {TARGET_CARD_MS} ms): {verdict}"
        )
    for count, size in nbytes.items():
        target = f" (target ≤ {TARGET_INDEX_MIB} MiB): " + ("met" if size <= TARGET_INDEX_MIB * MIB else "MISSED")
        print(f"  index nbytes at {count:,}: {size / MIB:.1f} MiB" + (target if count == 100_000 else ""))
    if growths:
        print(f"  model load RSS growth: median {sorted(growths)[len(growths) // 2] / MIB:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="timed calls of each one-at-a-time row")
    parser.add_argument("--batches", type=int, default=50, help="timed batches of 100 cards")
    parser.add_argument("--searches", type=int, default=50, help="timed searches per index size")
    parser.add_argument("--loads", type=int, default=5, help="fresh processes timing the model's load")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="index sizes, comma-separated")
    parser.add_argument("--probe-load", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_load:
        probe_load()
        return
    table = Table()
    growths = measure_loads(table, args.loads) if args.loads else []
    embedding = measure_embedding(table, args.calls, args.batches)
    nbytes = measure_index(table, args.searches, [int(size) for size in args.sizes.split(",")])
    table.print(
        f"python bench/embedding.py --calls {args.calls} --batches {args.batches} --searches {args.searches} "
        f"--loads {args.loads} --sizes {args.sizes}"
    )
    print_targets(embedding, nbytes, growths)


if __name__ == "__main__":
    main()
