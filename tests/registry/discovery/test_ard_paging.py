"""Pages merged from several sources (`registry.discovery.search.paging`): whatever the sources' page
sizes and scores, walking the pages shows every result once, best score first; and the readers of
open-ended input (filter strings, filter objects, page tokens) answer a value or a 400, never a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from registry.discovery.search.filter_syntax import check_order, parse_filter
from registry.discovery.search.paging import Place, Window, decode_token, encode_token, merge
from registry.discovery.search.request import (
    ARD_NAMESPACE,
    FILTER_KEYS,
    InvalidArgument,
    Selection,
    context_prefixes,
    read_filter,
)

Source = list[dict[str, Any]]


def _sources(draw: st.DrawFn) -> tuple[list[Source], list[int]]:
    """Sources of unique identifiers, each sorted best first, and each one's own page size."""
    count = draw(st.integers(1, 4))
    sources = []
    for index in range(count):
        scores = sorted(draw(st.lists(st.integers(0, 100), max_size=15)), reverse=True)
        sources.append(
            [{"identifier": f"urn:air:s{index}.example:a:{n}", "score": score} for n, score in enumerate(scores)]
        )
    return sources, [draw(st.integers(1, 6)) for _ in range(count)]


def _read(source: Source, token: str | None, page_size: int) -> tuple[Source, str | None]:
    """A source's page from its token (an offset), as a registry pages its own results."""
    start = int(token or 0)
    end = start + page_size
    return source[start:end], str(end) if end < len(source) else None


@settings(max_examples=300, deadline=None)
@given(data=st.data(), size=st.integers(1, 7))
def test_walking_merged_pages_shows_every_result_once_best_first(data: st.DataObject, size: int) -> None:
    sources, page_sizes = _sources(data.draw)
    places = [Place(index) for index in range(len(sources))]
    shown: Source = []
    for _ in range(500):
        windows = []
        for place in places:
            results, next_token = _read(sources[place.source], place.token, page_sizes[place.source])
            windows.append(Window(place, results[place.skip :], next_token))
        page, places = merge(windows, size)
        assert len(page) <= size
        shown += page
        token = encode_token("q", places)
        places = decode_token(token, "q", len(sources)) or []
        if not places:
            break
    else:
        raise AssertionError("the pages never end")
    everything = [result for source in sources for result in source]
    assert sorted(r["identifier"] for r in shown) == sorted(r["identifier"] for r in everything)
    scores = [result["score"] for result in shown]
    assert scores == sorted(scores, reverse=True)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("tagsdisplayNameypeuhblcrdAftTNDOR=:><!-(),'\"\\ 0129.-/")), max_size=80))
def test_any_filter_string_is_a_selection_or_a_400(text: str) -> None:
    try:
        assert isinstance(parse_filter(text), Selection)
    except InvalidArgument as error:
        assert error.message.startswith("filter")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_order_is_an_order_or_a_400(text: str) -> None:
    try:
        check_order(text)
    except InvalidArgument as error:
        assert "orderBy" in error.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


filter_keys = st.sampled_from([*FILTER_KEYS, "a:tags", f"{ARD_NAMESPACE}identifier"]) | st.text(max_size=8)
filter_values = st.text(max_size=30) | st.sampled_from(["urn:air:a.example:x", "urn:ai:A.example:y", "--1", "up"])
filters = st.dictionaries(filter_keys, filter_values | st.lists(filter_values, max_size=4) | json_values, max_size=5)


@settings(max_examples=500, deadline=None)
@given(value=filters | json_values, context=st.just({"a": ARD_NAMESPACE}) | json_values)
def test_any_filter_object_is_a_selection_or_a_400(value: Any, context: Any) -> None:
    try:
        selection = read_filter(value, context_prefixes(context))
    except InvalidArgument:
        return
    assert all(values for _, values in selection.groups) or selection.nothing
    selection.agent_query()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_page_token_is_places_or_a_400(token: str) -> None:
    try:
        decode_token(token, "q", 3)
    except InvalidArgument:
        pass
