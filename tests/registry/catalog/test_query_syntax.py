"""The text query syntax (`registry.catalog.query_syntax`): plain words search the text, `key:value`
words filter as the REST API's parameters do, and what it cannot read is refused with a message
that says what would do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from registry.catalog import AgentQuery, QuerySyntaxError, filtered_query, parse_query


def test_plain_words_are_the_text_and_filters_are_not() -> None:
    query = parse_query('convert currency tag:fx tag:"foreign exchange" cap:streaming is:signed health:UP')
    assert query.text == "convert currency"
    assert query.tags == ("fx", "foreign exchange")
    assert (query.capabilities, query.signature, query.health) == (("streaming",), "verified", "up")
    assert parse_query("tag:weather").text is None  # filters only: registration order, not ranked


def test_every_filter_of_the_rest_api_has_a_word() -> None:
    query = parse_query(
        "skill:forecast in:text/plain out:image/png proto:0.3 sig:unverifiable status:any include:dead "
        "rank:lexical match:any cap:push cap:extended words"
    )
    assert query == AgentQuery(
        text="words",
        skill="forecast",
        input_mode="text/plain",
        output_mode="image/png",
        protocol_version="0.3",
        signature="unverifiable",
        status="any",
        include_dead=True,
        ranking="lexical",
        match_any=True,
        capabilities=("pushNotifications", "extendedAgentCard"),
    )
    both = parse_query("mode:application/json")
    assert (both.input_mode, both.output_mode) == ("application/json", "application/json")


@pytest.mark.parametrize(
    ("shorthand", "filters"),
    [
        ("is:signed", {"signature": "verified"}),
        ("is:unsigned", {"signature": "unsigned"}),
        ("is:up", {"health": "up"}),
        ("is:healthy", {"health": "up"}),
        ("is:streaming", {"capabilities": ("streaming",)}),
        ("is:push", {"capabilities": ("pushNotifications",)}),
        ("is:deprecated", {"status": "deprecated"}),
    ],
)
def test_shorthands(shorthand: str, filters: dict[str, object]) -> None:
    assert parse_query(shorthand) == AgentQuery(**filters)  # type: ignore[arg-type]


def test_words_whose_key_is_no_filter_are_text() -> None:
    assert parse_query("https://example.com/agent 10:30 Tag:x").text == "https://example.com/agent 10:30"
    assert parse_query('"exact phrase" tag:"unclosed').tags == ("unclosed",)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("health:sideways", "health: takes one of up, degraded, down, unknown, not 'sideways'"),
        ("sig:maybe", "sig: takes one of verified, invalid, unverifiable, unsigned"),
        ("cap:teleport", "cap: takes one of streaming, push, extended"),
        ("is:fast", "is: takes one of signed"),
        ("tag:", "tag: needs a value (for example tag:weather)"),
        ('tag:""', "tag: needs a value"),
        ("-tag:weather", "search cannot exclude"),
        ("health:up health:down", "health: given twice with different values"),
        ("input:a/b mode:c/d", "input (or mode): given twice"),
        ("x" * 1025, "over the limit of 1024 characters"),
    ],
)
def test_what_it_cannot_read_is_refused_saying_what_would_do(text: str, complaint: str) -> None:
    with pytest.raises(QuerySyntaxError, match=".*") as refused:
        parse_query(text)
    assert complaint in refused.value.message


def test_filters_given_apart_join_a_query_and_may_not_contradict_it() -> None:
    query = filtered_query([("tag", "machine learning"), ("Health", "up"), ("cap", "pushNotifications")])
    assert (query.tags, query.health, query.capabilities) == (("machine learning",), "up", ("pushNotifications",))
    assert filtered_query([("tag", "b")], parse_query("a tag:a", AgentQuery(limit=5))).tags == ("a", "b")
    assert filtered_query([("health", "up")], parse_query("health:up")).health == "up"  # the same twice is fine
    with pytest.raises(QuerySyntaxError, match="health: given twice"):
        filtered_query([("health", "down")], parse_query("health:up"))
    with pytest.raises(QuerySyntaxError, match="'colour' is no filter"):
        filtered_query([("colour", "red")])


def test_a_base_query_keeps_its_page_and_text() -> None:
    query = parse_query("tag:x more words", AgentQuery(text="q", limit=7, cursor="c"))
    assert (query.text, query.limit, query.cursor, query.tags) == ("q more words", 7, "c", ("x",))


@given(st.text(max_size=200))
def test_any_text_is_a_query_or_a_refusal_that_names_the_problem(text: str) -> None:
    try:
        query = parse_query(text)
    except QuerySyntaxError as refused:
        assert refused.message
        return
    assert query.text is None or query.text.strip() == query.text and query.text


@given(st.lists(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12), max_size=8))
def test_words_without_colons_or_quotes_are_the_text_as_written(words: list[str]) -> None:
    assert parse_query(" ".join(words)).text == (" ".join(words) or None)
