"""The rankers the benchmark knows, by name, and what they are built from: the registry's own
search (`api`: fused, `api-lexical`, `api-semantic`, through `GET /v1/agents?q=…&ranking=…`) and
the reference rankers it was designed against (bm25s, wordllama, and their fusions). A variant is
a query parameter (`c.api("&ranking=lexical")`) or a `Settings` field
(`c.api(search_semantic_floor=0.2)`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from collections.abc import Callable
from typing import Any

from bench.relevance.dataset import RelevanceSet
from bench.relevance.fusion import FusedRRF, FusedScore
from bench.relevance.lexical import FIELD_WEIGHTS, Analyzer, BM25Ranker
from bench.relevance.metrics import Ranker
from bench.relevance.registry_search import ApiRanker
from bench.relevance.semantic import ModelLoad, SemanticRanker, load_wordllama


class Context:
    """What rankers are built from, each piece built once on first use."""

    def __init__(self, relevance_set: RelevanceSet, args: argparse.Namespace, stack: contextlib.ExitStack) -> None:
        self.set, self.args, self._stack = relevance_set, args, stack
        self._built: dict[str, Any] = {}

    def _once(self, name: str, build: Callable[[], Any]) -> Any:
        if name not in self._built:
            self._built[name] = build()
        return self._built[name]

    @property
    def analyzer(self) -> Analyzer:
        return self._once("analyzer", Analyzer)

    def bm25(self, weights: dict[str, int] | None = None) -> BM25Ranker:
        weights = weights or FIELD_WEIGHTS
        key = "bm25 " + json.dumps(weights, sort_keys=True)
        return self._once(key, lambda: BM25Ranker(self.set.cards, self.analyzer, weights))

    @property
    def model(self) -> tuple[Any, ModelLoad]:
        return self._once("model", load_wordllama)

    def semantic(self, floor: float | None = None) -> SemanticRanker:
        base = self._once("semantic", lambda: SemanticRanker(self.set.cards, self.model[0], self.args.floor))
        return base if floor is None or floor == base.floor else base.with_floor(floor)

    def api(self, params: str = "", **settings: Any) -> ApiRanker:
        """The registry's search, its own database holding the set's cards (one per variant)."""

        def build() -> ApiRanker:
            database_dir = self._stack.enter_context(tempfile.TemporaryDirectory())
            ranker = ApiRanker(self.set.cards, database_dir, params, settings)
            self._stack.callback(ranker.close)
            return ranker

        return self._once("api " + params + json.dumps(settings, sort_keys=True, default=str), build)


RANKERS: dict[str, Callable[[Context], Ranker]] = {
    "api": lambda c: c.api(),
    "api-lexical": lambda c: c.api("&ranking=lexical"),
    "api-semantic": lambda c: c.api("&ranking=semantic"),
    "bm25": lambda c: c.bm25(),
    "semantic": lambda c: c.semantic(),
    "fused-rrf": lambda c: FusedRRF(c.bm25(), c.semantic()),
    "fused-score": lambda c: FusedScore(c.bm25(), c.semantic(), c.args.semantic_weight),
}
