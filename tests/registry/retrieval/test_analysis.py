"""How text becomes search terms: the same function for cards and queries, so what a user types
meets what a card says whatever its case, accents, punctuation or word forms."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from registry.retrieval.analysis import MAX_QUERY_TERMS, MAX_TERM, field_text, query_terms, terms, words


def test_words_are_folded_to_lower_case_without_accents():
    assert words("Café GRÖSSE Ångström naïve") == ["cafe", "grosse", "angstrom", "naive"]
    assert words("Größe") == ["grosse"]  # case folding, not lower case: ß is "ss"
    assert words("ﬁle ½ Ⅻ") == ["file", "1", "2", "xii"]  # compatibility forms as what they stand for


def test_compatibility_forms_are_folded_to_lower_case_too():
    assert words("№5 Acme™ ℍotel") == ["no5", "acmetm", "hotel"]


def test_words_are_runs_of_letters_and_digits():
    assert words("d01-tag03 weather_forecast api.example.com/x?y=1") == [
        "d01",
        "tag03",
        "weather",
        "forecast",
        "api",
        "example",
        "com",
        "x",
        "y",
        "1",
    ]
    assert words("\"')—…  ") == []
    assert words("東京の天気 Привет") == ["東京の天気", "привет"]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_splits_alike_with_or_without_other_characters_beside_it(text):
    """Pure ASCII text takes a faster path than the rest: both must give the same words."""
    assert words(text) == words(text + " é")[:-1]


def test_stop_words_are_dropped_but_negations_kept():
    assert terms("What is the weather in the city") == ["weather", "citi"]
    assert terms("not spam, no ads") == ["not", "spam", "no", "ad"]
    assert terms("the of and to") == []


def test_word_forms_share_their_stem():
    assert terms("translating documents") == terms("Document translation")[::-1] == ["translat", "document"]
    assert terms("forecasts") == terms("forecasting") == terms("forecast") == ["forecast"]
    assert terms("Plans trips") == terms("plan trip")
    assert terms("forecasts") != terms("forecastle")


def test_a_word_longer_than_max_term_is_kept_by_its_head():
    blob = "a1" * 100
    assert [len(term) for term in terms(f"sha {blob}")] == [3, MAX_TERM]
    assert terms(blob) == terms(blob[:MAX_TERM] + "zzzz")  # the same term: what follows is not kept


def test_field_text_joins_the_terms_of_its_texts():
    assert field_text(["Weather Agent", "", "Forecasts for cities"]) == "weather agent forecast citi"
    assert field_text([]) == ""


def test_query_terms_are_distinct_in_order_and_bounded():
    assert query_terms("Forecasts, forecast and FORECASTING for Paris") == ["forecast", "pari"]
    many = " ".join(f"word{n}" for n in range(MAX_QUERY_TERMS + 5))
    assert query_terms(many) == [f"word{n}" for n in range(MAX_QUERY_TERMS)]
    assert query_terms("the and of") == []
