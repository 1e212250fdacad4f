"""Ranked search: what a query in words finds, best first. The one retrieval path of every
search surface (`GET /v1/agents?q=`, the CLI's `search --text`, and the surfaces built on
`CatalogSearch`).

1. Lexical candidates: the query's stemmed terms, any of them, from the text index. A term held
   by few agents brings all of them; a common one brings a bounded share. Scored with BM25F over
   the fields the index returns (`retrieval.scoring`).
2. Semantic candidates: the nearest agents to the query's embedding, from the in-process vector
   index, which reads what other processes wrote before every search (`retrieval.vectors`).
3. Fusion into one score in [0, 1]; an agent found only by meaning needs `semantic_floor`.
4. The exact filters (tags, modes, status, health, …) on the candidates, in the database. When
   the filters alone leave few agents, those agents are ranked instead, so that a narrow filter
   never loses its matches behind a thousand better ones elsewhere.

Health and signature state break ties among equally scored agents. A ranked search returns at
most its candidates (`candidates` + `nearest`, the best); pages of it are cursors over that order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy

from registry.catalog.search_index import Arm, Fields
from registry.catalog.store import CatalogStore
from registry.catalog.store_search import SearchFilters
from registry.cursors import RankKey
from registry.retrieval.analysis import query_terms
from registry.retrieval.embedding import Embedder
from registry.retrieval.scoring import bm25f, fuse, idf, matched_fields
from registry.retrieval.vectors import LiveVectors, VectorIndex

COMMON_SHARE = 0.01  # of the agents: a term on more is read from the table, not the text index
HEALTH_ORDER = {"up": 0, "degraded": 1, "unknown": 2, "down": 3}
SIGNATURE_ORDER = {"verified": 0, "unsigned": 1, "unverifiable": 2, "invalid": 3}
_STATE_COLUMNS = ("pk", "health_state", "signature_state")


@dataclasses.dataclass(frozen=True)
class RankingSettings:
    candidates: int = 400  # lexical candidates read per query, at most
    nearest: int = 100  # semantic candidates per query
    semantic_floor: float = 0.10  # cosine an agent found by meaning alone must reach (bench/relevance.py)
    narrow_filters: int = 1000  # filters leaving at most this many agents: rank those agents


@dataclasses.dataclass(frozen=True)
class Relevance:
    """Why an agent is in a ranked result: its score, the fields holding query terms, and the two
    scores fused (BM25F; cosine similarity)."""

    score: float
    matched: tuple[str, ...]
    lexical: float
    semantic: float


@dataclasses.dataclass(frozen=True)
class Ranked:
    pk: int
    relevance: Relevance
    key: RankKey  # its place in the order of results (`_place`)


@dataclasses.dataclass(frozen=True)
class _Found:
    """A query's candidates: BM25F scores, with the term weights and fields they came from, and
    cosines. Only the results returned are explained (`ranked`): explaining every candidate cost
    more than scoring it."""

    weights: dict[str, float]
    fields: dict[int, Fields]
    lexical: dict[int, float]
    semantic: dict[int, float]

    def ranked(self, place: RankKey) -> Ranked:
        """The result at `place` (`_place`: its score, negated, first; its pk last), explained."""
        pk, score = place[-1], round(-place[0], 4)
        cosine = round(self.semantic.get(pk, 0.0), 4)
        lexical = self.lexical.get(pk)
        if lexical is None:
            return Ranked(pk, Relevance(score, (), 0.0, cosine), place)
        matched = matched_fields(self.weights, self.fields[pk])
        return Ranked(pk, Relevance(score, matched, round(lexical, 4), cosine), place)


class RankedSearch:
    def __init__(self, store: CatalogStore, embedder: Embedder, settings: RankingSettings | None = None) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings or RankingSettings()
        self._vectors = LiveVectors(VectorIndex(embedder.dimensions), store.embeddings_since)

    @property
    def semantic(self) -> bool:
        return bool(self._embedder.dimensions)

    def rank(
        self,
        text: str,
        filters: SearchFilters,
        ranking: str = "fused",
        after: RankKey | None = None,
        count: int | None = None,
    ) -> list[Ranked]:
        """Agents matching `filters` that `text` finds, best first (`ranking`: fused, lexical or
        semantic): the first `count` (all without) after the place `after`."""
        terms = query_terms(text) if ranking != "semantic" else []
        query = self.embed(text) if ranking != "lexical" else None
        if not terms and query is None:
            return []
        narrowed = self._narrowed(filters)
        among = None if narrowed is None else list(narrowed)
        weights, fields = self._lexical(terms, among)
        lexical = bm25f(weights, fields.items())
        semantic = self._semantic(query, among, lexical)
        scored = self._fused(lexical, semantic, ranking)
        found = _Found(weights, fields, lexical, semantic)
        if narrowed is not None:  # every candidate is one of them: it passed the filters already
            places = sorted(_place(score, narrowed[pk]) for pk, score in scored.items())
            return [found.ranked(place) for place in places if after is None or place > after][:count]
        return [found.ranked(place) for place in self._filtered(scored, filters, after, count)]

    def embed(self, text: str) -> numpy.ndarray | None:
        """The query's embedding; None when semantic search is off."""
        return self._embedder.embed([text])[0] if self.semantic else None

    def nearest(self, query: numpy.ndarray, k: int) -> list[tuple[int, float]]:
        """The `k` agents nearest `query`, whatever their score (for suggestions)."""
        self._vectors.refresh()
        return self._vectors.index.nearest(query, k)

    def _narrowed(self, filters: SearchFilters) -> dict[int, Any] | None:
        """The agents the filters alone leave, when they are few, by pk with the states that order
        them (`_place`); None when they are many."""
        narrowing = [kind for kind, _ in filters.terms if kind != "status"]
        if not (narrowing or filters.groups() or filters.health or filters.health_in or filters.updated_since):
            return None
        limit = self._settings.narrow_filters
        rows = self._store.search(filters, 0, limit + 1, _STATE_COLUMNS)
        return {row.pk: row for row in rows} if len(rows) <= limit else None

    def _lexical(self, terms: list[str], among: list[int] | None) -> tuple[dict[str, float], dict[int, Fields]]:
        """The weights (idf) of the query terms some agent holds, and the fields of the agents to score."""
        if not terms:
            return {}, {}
        counts, documents = self._store.term_counts(terms)
        # The document count is kept a while (and an estimate on PostgreSQL); a term's is not.
        weights = {term: idf(counts[term], max(counts[term], documents)) for term in terms if counts[term]}
        if not weights:
            return {}, {}
        if among is not None:
            return weights, self._store.documents(among) if among else {}
        return weights, self._store.candidates(self._arms(weights, counts, documents))

    def _arms(self, weights: dict[str, float], counts: dict[str, int], documents: int) -> list[Arm]:
        """Rare terms bring every agent holding them, while they fit in half the budget; the
        others share the rest, a term on `COMMON_SHARE` of the agents or more read from the table.
        (Arms restricted to names and tags cost a read of every holder of a term that is seldom in
        them: 1,000,000 agents, four such words, 176 ms; they were dropped.)"""
        budget = self._settings.candidates
        arms: list[Arm] = []
        frequent: list[str] = []
        taken = 0
        for count, term in sorted((counts[term], term) for term in weights):
            if taken + count <= budget // 2:
                arms.append(Arm(term))
                taken += count
            else:
                frequent.append(term)
        share = max(20, (budget - taken) // len(frequent)) if frequent else 0
        arms.extend(Arm(term, limit=share, common=counts[term] >= COMMON_SHARE * documents) for term in frequent)
        return arms

    def _semantic(
        self, query: numpy.ndarray | None, among: list[int] | None, lexical: dict[int, float]
    ) -> dict[int, float]:
        if query is None:
            return {}
        self._vectors.refresh()
        index = self._vectors.index
        if among is not None:
            return index.similarities(query, among)
        similar = dict(index.nearest(query, self._settings.nearest))
        missing = [pk for pk in lexical if pk not in similar]
        return {**index.similarities(query, missing), **similar}

    def _fused(self, lexical: dict[int, float], semantic: dict[int, float], ranking: str) -> dict[int, float]:
        """Each candidate's fused score, unrounded (the order); one found by meaning alone needs the floor."""
        scored = {pk: fuse(score, semantic.get(pk, 0.0), ranking) for pk, score in lexical.items()}
        floor = self._settings.semantic_floor
        scored.update(
            (pk, fuse(0.0, cosine, ranking)) for pk, cosine in semantic.items() if pk not in lexical and cosine >= floor
        )
        return scored

    def _filtered(
        self,
        scored: dict[int, float],
        filters: SearchFilters,
        after: RankKey | None,
        count: int | None,
    ) -> list[RankKey]:
        """The places (`_place`) of the scored agents that pass every filter, in result order,
        after `after`: checked in the database a chunk at a time, best scores first, until `count`
        have passed."""
        order = sorted(scored, key=lambda pk: (-scored[pk], pk))
        if after is not None:
            order = [pk for pk in order if -scored[pk] >= after[0]]
        chunk, start = max(2 * (count or 0), 64), 0  # doubled after each chunk: a narrow filter reads few
        places: list[RankKey] = []
        while start < len(order) and (count is None or len(places) < count):
            end = start + chunk
            # Agents of one score stay in one chunk: their order depends on their states.
            while end < len(order) and scored[order[end]] == scored[order[end - 1]]:
                end += 1
            checked = dataclasses.replace(filters, among=order[start:end])
            rows = self._store.search(checked, 0, end - start, _STATE_COLUMNS)
            placed = sorted(_place(scored[row.pk], row) for row in rows)
            places.extend(place for place in placed if after is None or place > after)
            start, chunk = end, 2 * chunk
        return places[:count] if count is not None else places


def _place(score: float, row: Any) -> RankKey:
    """A result's place in the order: best score first, then healthier, then verified, then older."""
    return (-score, HEALTH_ORDER.get(row.health_state, 9), SIGNATURE_ORDER.get(row.signature_state, 9), row.pk)
