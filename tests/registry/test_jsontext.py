"""The fast JSON path must read and write exactly what the standard library would."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from registry import jsontext


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 123456789012345678901234567890}',  # beyond 64 bits: stays an exact integer
        '{"a": -9223372036854775809, "b": 18446744073709551616}',
        '{"s": "ünïcödé ✓", "f": 0.1, "e": 1e300, "n": null, "t": [true, false]}',
        '[1, 2.5, "x", {"k": {}}]',
    ],
)
def test_loads_agrees_with_the_standard_library(text):
    assert jsontext.loads(text.encode()) == json.loads(text)
    assert jsontext.loads(text) == json.loads(text)


def test_big_integers_round_trip_exactly():
    value = {"id": 2**80 + 1}
    assert json.loads(jsontext.dumps(value)) == value


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_as_not_json(constant):
    with pytest.raises(ValueError, match=f"{constant} is not a JSON number"):
        jsontext.loads(f'{{"a": {constant}}}'.encode())


def test_malformed_json_raises_value_error():
    with pytest.raises(ValueError):
        jsontext.loads(b'{"a": ')


def test_utf16_bodies_still_parse():
    assert jsontext.loads('{"a": 1}'.encode("utf-16")) == {"a": 1}


def test_dates_go_through_the_callers_default():
    rendered = jsontext.dumps({"at": dt.datetime(2026, 1, 2, 3, 4, 5)}, default=lambda v: f"<{v.isoformat()}>")
    assert json.loads(rendered) == {"at": "<2026-01-02T03:04:05>"}


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON_VALUES)
def test_canonical_is_the_same_whatever_the_key_order(value):  # type: ignore[no-untyped-def]
    reordered = json.loads(json.dumps(value), object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert jsontext.canonical(reordered) == jsontext.canonical(value)
    assert json.loads(jsontext.canonical(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a": "x\\u0000"}', "$.a"),
        ('[1, {"b": ["\\u0000"]}]', "$[1].b[0]"),
        ('{"k\\u0000": 1}', '$["k\\u0000"]'),
    ],
)
def test_input_with_a_nul_character_is_refused_with_its_path(text, path):
    assert jsontext.loads(text) == json.loads(text)  # stored JSON is read back as it was
    with pytest.raises(jsontext.NulCharacterError) as refused:
        jsontext.loads_input(text.encode())
    assert refused.value.path == path and path in str(refused.value)


def test_an_escaped_backslash_before_u0000_is_no_nul_character():
    assert jsontext.loads_input(b'{"a": "\\\\u0000"}') == {"a": "\\u0000"}


def test_stored_renderings_read_back_exactly_what_was_written() -> None:
    profile = {"name": "Échange", "big": 2**70, "ratio": 0.5, "tags": ["fx"], "nested": {"n": -(2**65)}}
    assert jsontext.loads_stored(jsontext.dumps(profile)) == profile
    assert jsontext.loads_stored(jsontext.dumps_text(profile)) == profile
