"""Scores: BM25F over an agent's weighted fields (a word in a name counts more than the same word
in a description), and the fusion of that with semantic similarity into one score in [0, 1]."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from registry.retrieval.scoring import (
    AVERAGE_LENGTHS,
    FIELD_WEIGHTS,
    FIELDS,
    K1,
    LEXICAL_HALF,
    SEMANTIC_SHARE,
    B,
    bm25f,
    fuse,
    idf,
    matched_fields,
)


def _document(field: str, term: str, length: int | None = None) -> tuple[str, ...]:
    """Fields holding `term` once, in `field`, padded to that field's typical length."""
    index = FIELDS.index(field)
    size = int(AVERAGE_LENGTHS[index]) if length is None else length
    return tuple(" ".join([term, *(f"pad{n}" for n in range(size - 1))]) if i == index else "" for i in range(4))


def test_a_word_counts_most_in_names_and_skill_names_then_tags_then_descriptions():
    documents = [(pk, _document(field, "invoice")) for pk, field in enumerate(FIELDS)]
    scores = bm25f({"invoice": 1.0}, documents)
    assert scores[0] == pytest.approx(scores[1]) and scores[1] > scores[2] > scores[3] > 0
    assert [matched_fields(["invoice"], fields) for _, fields in documents] == [(field,) for field in FIELDS]


def test_a_short_name_holding_the_word_beats_a_long_description_holding_it_twice():
    name = ("invoice reader", "", "", "")
    description = ("office helper", "", "", " ".join(["invoice", *["file"] * 40, "invoice", *["mail"] * 40]))
    scores = bm25f({"invoice": 1.0}, [(1, name), (2, description)])
    assert scores[1] > scores[2]


def test_more_occurrences_score_more_but_saturate():
    def score(count: int) -> float:
        return bm25f({"alpha": 1.0}, [(1, ("", "", "", " ".join(["alpha"] * count + ["x"] * 59)))])[1]

    assert score(1) < score(2) < score(4) < score(50) < 2.2  # idf × (k1 + 1): no term counts without bound


def test_rarer_terms_weigh_more_and_every_matched_field_is_named():
    document = ("weather agent", "forecast", "weather rain", "forecasts in the city")
    common = bm25f({"weather": idf(900, 1000)}, [(1, document)])[1]
    rare = bm25f({"rain": idf(3, 1000)}, [(1, document)])[1]
    assert rare > common
    assert matched_fields(["weather"], document) == ("name", "tags") and matched_fields(["rain"], document) == ("tags",)
    both = bm25f({"weather": idf(900, 1000), "rain": idf(3, 1000)}, [(1, document)])[1]
    assert both == pytest.approx(common + rare) and matched_fields(["weather", "rain"], document) == ("name", "tags")


def test_documents_holding_no_query_term_are_left_out():
    documents = [(1, ("weather", "", "", "")), (2, ("maps", "", "", "")), (3, ("", "", "", "weatherman"))]
    assert set(bm25f({"weather": 1.0}, documents)) == {1}
    assert bm25f({}, documents) == {}


def _textbook_bm25f(weights: dict[str, float], fields: tuple[str, ...]) -> float:
    """BM25F as it is written down: every field split into its terms, every term counted."""
    score = 0.0
    for term, term_idf in weights.items():
        weighted = 0.0
        for index, text in enumerate(fields):
            tokens = text.split()
            norm = 1 - B + B * len(tokens) / AVERAGE_LENGTHS[index]
            weighted += FIELD_WEIGHTS[index] * tokens.count(term) / norm
        if weighted:
            score += term_idf * weighted * (K1 + 1) / (weighted + K1)
    return score


# Words that hold one another ("in" in "invoice"), so a term inside a longer word is tried too.
_WORDS = st.sampled_from(["in", "invoice", "invoices", "voice", "x"])
_FIELD = st.lists(_WORDS, max_size=12).map(" ".join)


@given(
    st.dictionaries(_WORDS, st.floats(0.01, 10), min_size=1, max_size=3),
    st.lists(st.tuples(_FIELD, _FIELD, _FIELD, _FIELD), max_size=5),
)
def test_scores_and_matched_fields_are_those_of_whole_terms_counted_each_time(weights, documents):
    found = bm25f(weights, list(enumerate(documents)))
    expected = {pk: _textbook_bm25f(weights, fields) for pk, fields in enumerate(documents)}
    assert found == {pk: score for pk, score in expected.items() if score}  # exactly: the order depends on it
    for fields in documents:
        holding = tuple(name for name, text in zip(FIELDS, fields) if set(weights) & set(text.split()))
        assert matched_fields(weights, fields) == holding


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_idf_is_never_negative_and_falls_as_more_agents_hold_the_term(held, more):
    documents = held + more
    assert idf(held, documents) >= 0
    if held < documents:
        assert idf(held, documents) > idf(held + 1, documents)


def test_idf_of_a_term_no_agent_holds_is_largest():
    assert idf(0, 100) == pytest.approx(math.log(1 + 100.5 / 0.5))
    assert idf(0, 100) > idf(1, 100)


@given(
    st.floats(0, 1e6, allow_nan=False),
    st.floats(-1, 1, allow_nan=False),
    st.sampled_from(["fused", "lexical", "semantic"]),
)
def test_fused_scores_stay_within_zero_and_one(lexical, cosine, ranking):
    assert 0.0 <= fuse(lexical, cosine, ranking) <= 1.0


def test_each_ranking_weighs_its_own_evidence():
    assert fuse(LEXICAL_HALF, 0.9, "lexical") == pytest.approx(0.5)  # meaning ignored
    assert fuse(1000.0, 0.4, "semantic") == pytest.approx(0.4)  # words ignored
    assert fuse(1000.0, -0.3, "semantic") == 0.0  # an opposite meaning is no evidence, not a penalty
    assert fuse(LEXICAL_HALF, 0.5, "fused") == pytest.approx(SEMANTIC_SHARE * 0.5 + (1 - SEMANTIC_SHARE) * 0.5)


def test_fusion_ranks_by_both_scores():
    assert fuse(10.0, 0.5, "fused") < fuse(20.0, 0.5, "fused") < fuse(20.0, 0.6, "fused")
    # Meaning has the larger share: a close paraphrase beats a weak word match.
    assert fuse(0.0, 0.6, "fused") > fuse(5.0, 0.2, "fused")
    assert fuse(0.0, 0.0, "fused") == 0.0
