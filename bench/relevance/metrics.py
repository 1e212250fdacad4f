"""What a ranker is, and how its answers are scored: nDCG@10 (gain 2^grade - 1), recall@5 and
MRR over the cards graded 2 or 3."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from typing import Protocol

from bench.relevance.dataset import Query

Ranking = list[tuple[str, float]]  # (card id, score), best first


class Ranker(Protocol):
    """Answers a query with the cards it would show, best first (an empty list is an answer)."""

    def rank(self, text: str) -> Ranking: ...


def dcg(ids: Sequence[str], grades: dict[str, int], k: int) -> float:
    return sum((2 ** grades.get(card, 0) - 1) / math.log2(n + 2) for n, card in enumerate(ids[:k]))


def ndcg(ids: Sequence[str], query: Query, k: int = 10) -> float:
    ideal = dcg(sorted(query.grades, key=lambda c: -query.grades[c]), query.grades, k)
    return dcg(ids, query.grades, k) / ideal


def recall(ids: Sequence[str], query: Query, k: int = 5) -> float:
    return len(query.relevant() & set(ids[:k])) / len(query.relevant())


def reciprocal_rank(ids: Sequence[str], query: Query) -> float:
    relevant = query.relevant()
    return next((1 / n for n, card in enumerate(ids, 1) if card in relevant), 0.0)


@dataclasses.dataclass(frozen=True)
class Summary:
    queries: int
    ndcg: float
    recall: float
    mrr: float
    empty: int


def summarize(answers: dict[str, list[str]], queries: list[Query]) -> Summary:
    empty = sum(1 for q in queries if not answers[q.id])
    graded = [q for q in queries if q.relevant()]
    if not graded:
        return Summary(len(queries), math.nan, math.nan, math.nan, empty)
    mean = lambda f: statistics.fmean(f(answers[q.id], q) for q in graded)  # noqa: E731
    return Summary(len(queries), mean(ndcg), mean(recall), mean(reciprocal_rank), empty)


def answer_all(ranker: Ranker, queries: list[Query]) -> dict[str, list[str]]:
    return {q.id: [card for card, _ in ranker.rank(q.text)] for q in queries}


def lost_by_floor(unfloored: dict[str, list[str]], floored: dict[str, list[str]], queries: list[Query]) -> int:
    """Queries that had a relevant card in their top 10 and have none once the floor applies."""
    return sum(
        1 for q in queries if q.relevant() & set(unfloored[q.id][:10]) and not q.relevant() & set(floored[q.id][:10])
    )
