"""Two ways of combining the lexical and the semantic ranker: rank fusion and score fusion."""

from __future__ import annotations

from bench.relevance.lexical import BM25Ranker
from bench.relevance.metrics import Ranking
from bench.relevance.semantic import SemanticRanker

BM25_HALF = 20.0  # the BM25 score `FusedScore` maps to 0.5 (a strong match of two or three terms)
RRF_K = 60


class FusedRRF:
    """Reciprocal rank fusion of the BM25 ranking (cards with a match) and the semantic ranking;
    only cards whose cosine reaches the floor are shown."""

    def __init__(self, bm25: BM25Ranker, semantic: SemanticRanker, k: int = RRF_K, semantic_share: float = 1.0) -> None:
        self._bm25, self._semantic, self._k, self._share = bm25, semantic, k, semantic_share

    def rank(self, text: str) -> Ranking:
        cosines = dict(zip(self._semantic.ids, self._semantic.similarities(text)))
        lexical = self._bm25.rank(text)
        semantic = sorted(cosines.items(), key=lambda p: -p[1])
        fused: dict[str, float] = {}
        for ranking, share in ((lexical, 1.0), (semantic, self._share)):
            for position, (card_id, _) in enumerate(ranking, 1):
                fused[card_id] = fused.get(card_id, 0.0) + share / (self._k + position)
        shown = [(i, s) for i, s in fused.items() if cosines[i] >= self._semantic.floor]
        return sorted(shown, key=lambda p: -p[1])


class FusedScore:
    """w * cosine + (1 - w) * s / (s + half), s the BM25 score: both terms absolute, so a weak
    incidental word match adds little (dividing by the query's best BM25 score instead gives a
    lone weak match full weight). Only cards whose cosine reaches the floor are shown."""

    def __init__(self, bm25: BM25Ranker, semantic: SemanticRanker, weight: float, half: float = BM25_HALF) -> None:
        self._bm25, self._semantic, self._weight, self._half = bm25, semantic, weight, half

    def rank(self, text: str) -> Ranking:
        lexical = self._bm25.scores(text)
        cosines = self._semantic.similarities(text)
        fused = [
            (i, self._weight * c + (1 - self._weight) * b / (b + self._half))
            for i, c, b in zip(self._semantic.ids, cosines, lexical)
            if c >= self._semantic.floor
        ]
        return sorted(fused, key=lambda p: -p[1])
