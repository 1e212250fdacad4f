"""What the benchmark prints: the result table, per-query figures, the paraphrase check, the
floor sweep, the tuning grid and the embedding model's costs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.relevance.dataset import KINDS, Query, RelevanceSet, card_text
from bench.relevance.fusion import BM25_HALF, FusedRRF, FusedScore
from bench.relevance.lexical import FIELD_WEIGHTS, Analyzer
from bench.relevance.metrics import Ranker, answer_all, lost_by_floor, ndcg, summarize
from bench.relevance.rankers import Context
from bench.relevance.semantic import SemanticRanker


def groups(queries: list[Query]) -> list[tuple[str, list[Query]]]:
    by_kind = [(kind, [q for q in queries if q.kind == kind]) for kind in (*KINDS, "none")]
    return [*by_kind[:3], ("all", [q for q in queries if q.kind != "none"]), by_kind[3]]


def print_table(results: dict[str, dict[str, list[str]]], queries: list[Query]) -> None:
    print(f"\n{'ranker':<22} {'kind':<11} {'queries':>7} {'nDCG@10':>8} {'recall@5':>9} {'MRR':>6} {'empty':>6}")
    for name, answers in results.items():
        for kind, members in groups(queries):
            s = summarize(answers, members)
            figures = "" if kind == "none" else f"{s.ndcg:>8.3f} {s.recall:>9.3f} {s.mrr:>6.3f}"
            print(f"{name:<22} {kind:<11} {s.queries:>7} {figures:>25} {s.empty:>6}")
    print("(empty: queries answered with no card at all; for `none` that is the right answer)")


def print_per_query(results: dict[str, dict[str, list[str]]], queries: list[Query]) -> None:
    names = list(results)
    print(
        f"\nnDCG@10 per query (after the bar: the last ranker's top card)\n{'query':<18} "
        + " ".join(f"{n[:11]:>11}" for n in names)
    )
    for q in queries:
        cells = [
            f"{ndcg(results[n][q.id], q):>11.2f}" if q.relevant() else f"{len(results[n][q.id]):>10}c" for n in names
        ]
        print(f"{q.id:<18} " + " ".join(cells) + f" | {(results[names[-1]][q.id] or ['-'])[0]}")
    print("(`none` queries: how many cards came back)")


def check_paraphrases(relevance_set: RelevanceSet, analyzer: Analyzer) -> None:
    """A paraphrase must share no stemmed content word with any card graded 3 for it."""
    paraphrases = [q for q in relevance_set.queries if q.kind == "paraphrase"]
    clean = 0
    for q in paraphrases:
        words = set(analyzer.terms([q.text])[0])
        shared = {
            card_id: words & {t for ts in analyzer.terms([card_text(relevance_set.cards[card_id])]) for t in ts}
            for card_id, grade in q.grades.items()
            if grade == 3
        }
        for card_id, terms in shared.items():
            if terms:
                print(f"WARNING: paraphrase {q.id!r} shares {sorted(terms)} with {card_id}")
        clean += not any(shared.values())
    print(f"paraphrase check: {clean} of {len(paraphrases)} share no stemmed content word with their grade-3 cards")


def print_floor_sweep(context: Context, queries: list[Query]) -> None:
    relevant = [q for q in queries if q.kind != "none"]
    none = [q for q in queries if q.kind == "none"]
    print(f"\nCosine floor sweep. none: of {len(none)} `none` queries, how many come back empty; lost: of")
    print(f"{len(relevant)} relevant queries, how many had a relevant card in the top 10 without the floor")
    print(f"and have none with it; nDCG@10 over the {len(relevant)} relevant queries.")
    makers: dict[str, Callable[[SemanticRanker], Ranker]] = {
        "semantic": lambda s: s,
        "fused-rrf": lambda s: FusedRRF(context.bm25(), s),
        "fused-score": lambda s: FusedScore(context.bm25(), s, context.args.semantic_weight),
    }
    print(f"{'floor':>6} " + " ".join(f"{name + ' none lost nDCG':>27}" for name in makers))
    unfloored = {name: answer_all(make(context.semantic(-1.0)), queries) for name, make in makers.items()}
    for floor in [f / 100 for f in range(0, 45, 5)]:
        cells = []
        for name, make in makers.items():
            answers = answer_all(make(context.semantic(floor)), queries)
            empty, lost = summarize(answers, none).empty, lost_by_floor(unfloored[name], answers, relevant)
            cells.append(f"{empty:>2}/{len(none)} {lost:>4} {summarize(answers, relevant).ndcg:>6.3f}")
        print(f"{floor:>6.2f} " + " ".join(f"{cell:>27}" for cell in cells))


def print_tuning(context: Context, queries: list[Query]) -> None:
    relevant = [q for q in queries if q.kind != "none"]

    def line(label: str, ranker: Ranker) -> None:
        answers = answer_all(ranker, relevant)
        cells = [summarize(answers, [q for q in relevant if q.kind == kind]).ndcg for kind in (*KINDS, "")]
        cells[-1] = summarize(answers, relevant).ndcg
        print(f"  {label:<40} " + " ".join(f"{c:>10.3f}" for c in cells))

    bm25, semantic = context.bm25(), context.semantic()
    print(
        f"\nTuning: nDCG@10 at floor {context.args.floor:.2f}{'':<17} " + " ".join(f"{k:>10}" for k in (*KINDS, "all"))
    )
    for weights in (
        {"name": 1, "skill": 1, "tags": 1, "description": 1, "examples": 1},
        FIELD_WEIGHTS,
        {"name": 5, "skill": 5, "tags": 3, "description": 1, "examples": 1},
        {"name": 3, "skill": 3, "tags": 2, "description": 1, "examples": 0},
    ):
        label = "/".join(str(weights[f]) for f in ("name", "skill", "tags", "description", "examples"))
        line(f"bm25, fields {label}", context.bm25(weights))
        line(f"fused-score, fields {label}", FusedScore(context.bm25(weights), semantic, context.args.semantic_weight))
    print("  (fields: weights of name / skill names / tags / descriptions / examples)")
    line("semantic", semantic)
    for k, share in ((10, 1.0), (60, 1.0), (60, 2.0)):
        line(f"fused-rrf k={k}, semantic counted x{share:g}", FusedRRF(bm25, semantic, k, share))
    for half in (5.0, BM25_HALF):
        for weight in (0.5, 0.7, 0.85):
            line(f"fused-score w={weight:g}, BM25 half at {half:g}", FusedScore(bm25, semantic, weight, half))


def print_model_costs(context: Context) -> None:
    import wordllama

    model, load = context.model
    package = Path(wordllama.__file__).parent
    on_disk = sum(p.stat().st_size for p in package.rglob("*") if p.is_file())
    cards = [card_text(c) for c in context.set.cards.values()]
    queries = [q.text for q in context.set.queries]
    model.embed(cards[:8], norm=True)  # warm-up: the tokenizer's first call allocates
    per_card = [_ms(model.embed, [text]) for text in cards]
    per_query = [_ms(model.embed, [text]) for text in queries]
    batch = _ms(model.embed, cards)
    print(f"\nwordllama {wordllama.__version__}, l2_supercat 256-d, from {package}, network refused while loading")
    print(
        f"  load {load.seconds * 1000:.0f} ms; resident memory +{load.rss_delta / 2**20:.1f} MiB "
        f"(embedding matrix {load.matrix_bytes / 2**20:.1f} MiB as float32); package {on_disk / 2**20:.1f} MiB on disk"
    )
    print(
        f"  embed one card: median {statistics.median(per_card):.3f} ms, max {max(per_card):.3f} ms "
        f"({len(cards)} cards, {statistics.fmean(len(c) for c in cards):.0f} characters on average)"
    )
    print(f"  embed one query: median {statistics.median(per_query):.3f} ms, max {max(per_query):.3f} ms")
    print(f"  embed all {len(cards)} cards in one call: {batch:.1f} ms")


def _ms(embed: Callable[..., Any], texts: list[str]) -> float:
    t0 = time.perf_counter()
    embed(texts, norm=True)
    return (time.perf_counter() - t0) * 1000
