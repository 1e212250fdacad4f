"""How text becomes the words PostgreSQL's index keeps (`lexemes`): the same split as SQLite's FTS5
table, with a fast path for ASCII that must agree with the general one."""

from __future__ import annotations

import random
import string

from registry.catalog.store_postgres import _LEXEMES, MAX_LEXEME, lexemes, vector


def test_words_are_letters_and_digits_in_lower_case_without_diacritics():
    assert lexemes("Café Größe d01-tag03 weather_forecast api.example.com") == [
        "cafe",
        "große",
        "d01",
        "tag03",
        "weather",
        "forecast",
        "api",
        "example",
        "com",
    ]
    assert lexemes("") == [] and lexemes("-- !! __") == []


def test_the_ascii_path_agrees_with_the_general_one():
    rng = random.Random(3)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\n"
    for _ in range(500):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 80)))
        assert lexemes(text) == _LEXEMES.findall(text.lower()), text


def test_long_words_are_cut_and_the_vector_lists_each_word_once():
    assert lexemes("x" * (MAX_LEXEME + 50) + " ÿ" * 2) == ["x" * MAX_LEXEME, "y", "y"]
    assert vector("beta Alpha beta") == "'alpha' 'beta'"
    assert vector("...") == ""
