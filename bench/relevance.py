"""Relevance benchmark for text search: nDCG@10, recall@5 and MRR per query kind, for the
registry's own search (`GET /v1/agents?q=`) and for reference rankers — field-weighted BM25
(bm25s + PyStemmer), wordllama embeddings, and two fusions of the two — over the real Agent
Cards and graded queries in bench/relevance/ (its README says where they come from).

    pip install bm25s PyStemmer wordllama        # beside agentdex (-e .); not in setup.py yet
    python bench/relevance.py                     # every ranker, floor sweep, timings
    python bench/relevance.py --rankers api,bm25 --floor 0.3 --no-tuning

A ranker is a name in RANKERS (bench/relevance/rankers.py) and a function from the benchmark's
context to an object with `rank(text) -> [(card id, score), ...]`, best first, holding only
what it would show; the implementation of ranked search adds its `api-…` variants there.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.relevance.command import main  # noqa: E402

if __name__ == "__main__":
    main()
