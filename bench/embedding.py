"""Embedding benchmark: what semantic search costs in `registry.retrieval` — loading the model,
embedding cards and queries, and searching the in-process vector index.

    python bench/embedding.py
    python bench/embedding.py --calls 5000 --batches 100 --searches 100 --loads 9
    python bench/embedding.py --keep /var/tmp/agentdex-embedding   # card embeddings kept for reuse

Rows: the model's load in a fresh process (import of wordllama and its weights, timed from the
first `embed`), run --loads times; one real card's text (name, description, skill names,
descriptions, tags and examples of the cards of bench/relevance/cards/ whose text is 60-150
words) embedded one at a time and in batches of 100, with wordllama's own `embed` on the same
texts for reference; a short query; then `VectorIndex.nearest` by brute force with k=200 over
10,000, 100,000 and 1,000,000 random packed vectors (and among 5,000 of the 100,000), with
upserting them. Then the approximate index, on --cards embeddings of bench/search_corpus.py's
generated cards (random vectors lack what makes card vectors hard to index: a direction every
card shares), queried with the texts of bench/relevance/queries.json: upserting them 100,000 at a
time (the approximate index built in the writing thread as the threshold and then fourfold growth
are crossed), `nearest` k=100 by brute force and approximately, k=10 approximately, and the
approximate results' recall of the brute-force ones. Embedding a million cards takes minutes:
--keep DIR keeps them for the next run. Times are wall clock, and for batches p50/p99 are per
card; the targets add CPU per card, which counts the tokenizer's own threads.
Targets: embedding ≤ 0.2 ms per card; the index of 100,000 agents ≤ 64 MiB; recall@100 ≥ 0.95.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
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
from bench.search_corpus import GENERATOR_VERSION, CardGenerator  # noqa: E402
from registry.catalog.records import embedding_text  # noqa: E402
from registry.retrieval.embedding import DIMENSIONS, MODEL_ID, WordLlamaEmbedder, pack  # noqa: E402
from registry.retrieval.vectors import VectorIndex  # noqa: E402
from registry.validation import summarize_card  # noqa: E402

CARDS = ROOT / "bench" / "relevance" / "cards"
RELEVANCE_QUERIES = ROOT / "bench" / "relevance" / "queries.json"
QUERIES = ["convert euros to yen", "book a flight to Tokyo", "summarise a pdf", "weather in Lisbon tomorrow"]
TARGET_CARD_MS, TARGET_INDEX_MIB, TARGET_RECALL = 0.2, 64, 0.95
MIB = 1024 * 1024
EXACT_ONLY = sys.maxsize  # an approximate_rows no index reaches


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
    index, seconds = VectorIndex(DIMENSIONS, approximate_rows=EXACT_ONLY), 0.0
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


def card_records(count: int, keep: Path | None) -> numpy.ndarray:
    """The first `count` generated cards' embeddings, packed: one row of bytes per card. Read from
    `keep` when a previous run left them there, else embedded 1,000 at a time (and kept)."""
    path = keep / f"cards-{count}-v{GENERATOR_VERSION}-{MODEL_ID}.npy" if keep else None
    if path and path.exists():
        return numpy.load(path)
    generator, embedder, batches = CardGenerator(), WordLlamaEmbedder(), []
    start = time.perf_counter()
    for first in range(0, count, 1000):
        items = generator.items(first, min(count, first + 1000))
        packed = pack(embedder.embed([embedding_text(summarize_card(item["card"])) for item in items]))
        batches.append(numpy.frombuffer(b"".join(packed), dtype=numpy.uint8).reshape(len(packed), -1))
    records = numpy.concatenate(batches)
    print(f"{count:,} cards generated and embedded in {time.perf_counter() - start:.0f}s", flush=True)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        numpy.save(path, records)
    return records


def upsert_records(index: VectorIndex, records: numpy.ndarray) -> None:
    for start in range(0, len(records), 100_000):
        chunk = records[start : start + 100_000]
        index.upsert(zip(range(start, start + len(chunk)), (row.tobytes() for row in chunk)))


@dataclasses.dataclass
class Approximate:
    count: int
    recalls: dict[int, list[float]]  # by k, per query
    nbytes: int
    rss_growth: int


def measure_approximate(table: Table, count: int, searches: int, keep: Path | None) -> Approximate:
    """Brute force and the approximate index over `count` card embeddings, queried with the
    relevance set's texts."""
    records = card_records(count, keep)
    texts = [query["text"] for query in json.loads(RELEVANCE_QUERIES.read_text())["queries"]]
    queries = WordLlamaEmbedder().embed(texts)
    exact = VectorIndex(DIMENSIONS, approximate_rows=EXACT_ONLY)
    upsert_records(exact, records)
    before, t0 = settled_rss(), time.perf_counter()
    approximate = VectorIndex(DIMENSIONS, build_with=lambda task: task())
    upsert_records(approximate, records)
    growth = settled_rss() - before
    table.add(f"upsert {count:,} cards, building the approximate index", count, time.perf_counter() - t0)
    del records
    for k, index, how in [
        (100, exact, "brute force"),
        (100, approximate, "approximate"),
        (10, approximate, "approximate"),
    ]:
        time_calls(table, f"nearest k={k} over {count:,} cards ({how})", searches, _searching(index, queries, k))
    recalls = {k: [_recall(approximate.nearest(q, k), exact.nearest(q, k)) for q in queries] for k in (100, 10)}
    return Approximate(count, recalls, approximate.nbytes, growth)


def settled_rss() -> int:
    """RSS once glibc has returned the heap freed so far to the system (`malloc_trim`): what is
    held, without what a construction freed and the allocator kept for later."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_bytes()


def _searching(index: VectorIndex, queries: numpy.ndarray, k: int) -> Callable[[int], object]:
    return lambda i: index.nearest(queries[i % len(queries)], k)


def _recall(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> float:
    return len({pk for pk, _ in found} & {pk for pk, _ in expected}) / max(1, len(expected))


def print_approximate(result: Approximate) -> None:
    for k, recalls in sorted(result.recalls.items(), reverse=True):
        mean = sum(recalls) / len(recalls)
        verdict = f" (target ≥ {TARGET_RECALL}): " + ("met" if mean >= TARGET_RECALL else "MISSED") if k == 100 else ""
        print(
            f"  approximate recall@{k} over {result.count:,} cards: mean {mean:.3f}, lowest {min(recalls):.2f} "
            f"of {len(recalls)} queries{verdict}"
        )
    print(
        f"  index nbytes at {result.count:,} cards with the approximate index: {result.nbytes / MIB:.1f} MiB "
        f"(RSS growth while filling it, after malloc_trim: {result.rss_growth / MIB:.1f} MiB)"
    )


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
    parser.add_argument("--cards", type=int, default=1_000_000, help="card embeddings for the approximate index")
    parser.add_argument("--keep", type=Path, default=None, help="keep the cards' embeddings in this folder")
    parser.add_argument("--probe-load", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_load:
        probe_load()
        return
    table = Table()
    growths = measure_loads(table, args.loads) if args.loads else []
    embedding = measure_embedding(table, args.calls, args.batches)
    nbytes = measure_index(table, args.searches, [int(size) for size in args.sizes.split(",")])
    approximate = measure_approximate(table, args.cards, args.searches, args.keep) if args.cards else None
    table.print(
        f"python bench/embedding.py --calls {args.calls} --batches {args.batches} --searches {args.searches} "
        f"--loads {args.loads} --sizes {args.sizes} --cards {args.cards}"
    )
    print_targets(embedding, nbytes, growths)
    if approximate:
        print_approximate(approximate)


if __name__ == "__main__":
    main()
