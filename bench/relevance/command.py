"""`python bench/relevance.py`: run the rankers over the relevance set and print the reports."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from bench.relevance.dataset import KINDS, SET_DIR, RelevanceSet
from bench.relevance.metrics import answer_all
from bench.relevance.rankers import RANKERS, Context
from bench.relevance.reports import (
    check_paraphrases,
    print_floor_sweep,
    print_model_costs,
    print_per_query,
    print_table,
    print_tuning,
)

DEFAULT_FLOOR = 0.10  # cosine floor of `semantic` and the fusions; the floor sweep says why
DEFAULT_SEMANTIC_WEIGHT = 0.7  # share of the cosine in `fused-score`
# The reference rankers' packages (module: distribution), not agentdex's dependencies (yet).
REFERENCE_PACKAGES = {"bm25s": "bm25s", "Stemmer": "PyStemmer", "wordllama": "wordllama"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rankers", default=",".join(RANKERS), help=f"comma-separated, of {', '.join(RANKERS)}")
    parser.add_argument("--floor", type=float, default=DEFAULT_FLOOR, help="cosine floor of semantic and fusions")
    parser.add_argument(
        "--semantic-weight", type=float, default=DEFAULT_SEMANTIC_WEIGHT, help="cosine share in fused-score"
    )
    parser.add_argument("--per-query", action="store_true", help="print each query's nDCG@10 per ranker")
    parser.add_argument("--no-tuning", action="store_true", help="skip the floor sweep, weight tuning and timings")
    args = parser.parse_args()
    names = [n.strip() for n in args.rankers.split(",") if n.strip()]
    unknown = [n for n in names if n not in RANKERS]
    if unknown:
        parser.error(f"unknown rankers {unknown}; choose from {list(RANKERS)}")
    relevance_set = RelevanceSet.load(SET_DIR)
    kinds = {kind: sum(q.kind == kind for q in relevance_set.queries) for kind in (*KINDS, "none")}
    print(f"{len(relevance_set.cards)} cards, {len(relevance_set.queries)} queries {kinds}")
    t0 = time.perf_counter()
    try:
        run(relevance_set, names, args)
    except ModuleNotFoundError as error:
        if error.name in REFERENCE_PACKAGES:
            raise SystemExit(f"{error.name} is missing: pip install {' '.join(REFERENCE_PACKAGES.values())}") from error
        raise
    print(f"\n{time.perf_counter() - t0:.1f}s; reproduce: python " + " ".join(sys.argv))


def run(relevance_set: RelevanceSet, names: list[str], args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        context = Context(relevance_set, args, stack)
        check_paraphrases(relevance_set, context.analyzer)
        results = {name: answer_all(RANKERS[name](context), relevance_set.queries) for name in names}
        print_table(results, relevance_set.queries)
        if args.per_query:
            print_per_query(results, relevance_set.queries)
        if not args.no_tuning:
            print_floor_sweep(context, relevance_set.queries)
            print_tuning(context, relevance_set.queries)
            print_model_costs(context)
