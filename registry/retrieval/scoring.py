"""Scores: BM25F over an agent's weighted fields, and the fusion of lexical and semantic scores.

The database finds the candidates (its text index); their scores are computed here, from the
analysed fields the index stores, so that both databases rank alike. `bench/relevance.py`
measured the choices below on real cards: score fusion beats reciprocal rank fusion (nDCG@10
0.749 against 0.733), and field weights move little once names outweigh descriptions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

# An agent's text, as the index holds it: each field's terms joined by spaces (`analysis.field_text`).
FIELDS = ("name", "skills", "tags", "description")
# BM25F: a term counts this many times in each field. Names and skill names above tags, tags above
# descriptions and examples.
FIELD_WEIGHTS = (3.0, 3.0, 2.0, 1.0)
# Typical field lengths of real cards, in terms (bench/relevance's cards): length normalisation
# against constants rather than catalog-wide averages, which would need a scan to keep current.
AVERAGE_LENGTHS = (3.0, 6.0, 8.0, 60.0)
K1, B = 1.2, 0.75

RANKINGS = ("fused", "lexical", "semantic")
SEMANTIC_SHARE = 0.7  # of the fused score; the rest is lexical (bench/relevance.py --semantic-weight)
LEXICAL_HALF = 25.0  # the BM25F score that counts as half a lexical match (the curve s / (s + half))


def idf(documents_with_term: int, documents: int) -> float:
    """BM25's inverse document frequency (the Lucene variant, never negative)."""
    return math.log(1 + (documents - documents_with_term + 0.5) / (documents_with_term + 0.5))


def bm25f(weights: Mapping[str, float], documents: Iterable[tuple[int, tuple[str, ...]]]) -> dict[int, float]:
    """BM25F of each (pk, fields) document for the query terms in `weights` (term → idf);
    documents holding none of them are left out."""
    scores = {}
    for pk, fields in documents:
        score = _score(weights, fields)
        if score:  # idf is never zero: a document holding a term scores above zero
            scores[pk] = score
    return scores


def _score(weights: Mapping[str, float], fields: tuple[str, ...]) -> float:
    score = 0.0
    for term, term_idf in weights.items():
        weighted = 0.0
        for index, text in enumerate(fields):
            # A substring test first: most fields hold no query term, and splitting is the cost
            # (a term inside a longer one counts zero times).
            if term in text:
                tokens = text.split()
                norm = 1 - B + B * len(tokens) / AVERAGE_LENGTHS[index]
                weighted += FIELD_WEIGHTS[index] * tokens.count(term) / norm
        if weighted:
            score += term_idf * weighted * (K1 + 1) / (weighted + K1)
    return score


def matched_fields(terms: Iterable[str], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The names of the fields (`FIELDS`) that hold any of the terms."""
    wanted = set(terms)
    return tuple(name for name, text in zip(FIELDS, fields) if not wanted.isdisjoint(text.split()))


def fuse(lexical: float, semantic: float, ranking: str) -> float:
    """One score in [0, 1] from a BM25F score and a cosine similarity."""
    lexical_part = lexical / (lexical + LEXICAL_HALF)
    if ranking == "lexical":
        return lexical_part
    semantic_part = max(semantic, 0.0)
    if ranking == "semantic":
        return semantic_part
    return SEMANTIC_SHARE * semantic_part + (1 - SEMANTIC_SHARE) * lexical_part
