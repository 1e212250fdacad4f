"""The reference lexical ranker: field-weighted BM25 over stemmed words."""

from __future__ import annotations

import logging
from typing import Any

from bench.relevance.dataset import card_fields
from bench.relevance.metrics import Ranking

# Field weights (each field's terms counted this many times, as BM25F does): names and skill
# names above tags, tags above descriptions and examples.
FIELD_WEIGHTS = {"name": 3, "skill": 3, "tags": 2, "description": 1, "examples": 1}


class Analyzer:
    """Lower-cased words of two letters or more, NLTK's English stop words (as bm25s ships
    them) removed, Snowball-stemmed (PyStemmer)."""

    def __init__(self) -> None:
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG on import
        self._tokenize = bm25s.tokenize
        self._stemmer = Stemmer.Stemmer("english")

    def terms(self, texts: list[str]) -> list[list[str]]:
        return self._tokenize(texts, stopwords="en_plus", stemmer=self._stemmer, return_ids=False, show_progress=False)


class BM25Ranker:
    """Okapi BM25 (bm25s, Lucene variant) over each card's fields, a field's terms repeated by
    its weight: term frequency and document length both weighted, as in BM25F."""

    def __init__(self, cards: dict[str, dict[str, Any]], analyzer: Analyzer, weights: dict[str, int]) -> None:
        import bm25s

        self.ids = list(cards)
        self._analyzer = analyzer
        corpus = [self._weighted_terms(cards[card_id], weights) for card_id in self.ids]
        self._index = bm25s.BM25()
        self._index.index(corpus, show_progress=False)

    def _weighted_terms(self, card: dict[str, Any], weights: dict[str, int]) -> list[str]:
        terms: list[str] = []
        for field, texts in card_fields(card).items():
            field_terms = [t for words in self._analyzer.terms(texts) for t in words] if texts else []
            terms.extend(field_terms * weights[field])
        return terms

    def scores(self, text: str) -> list[float]:
        terms = self._analyzer.terms([text])[0]
        known = [t for t in terms if t in self._index.vocab_dict]
        return list(self._index.get_scores(known)) if known else [0.0] * len(self.ids)

    def rank(self, text: str) -> Ranking:
        return sorted(((i, s) for i, s in zip(self.ids, self.scores(text)) if s > 0), key=lambda p: -p[1])
