"""The strict JSON reader: what `json` reads, it reads the same; what readers could disagree on
(repeated names, lone surrogates, depth, NaN) it refuses, saying where."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from signing import (
    MAX_JSON_DEPTH,
    DuplicateMemberError,
    JsonSyntaxError,
    JsonTooDeepError,
    LoneSurrogateError,
    loads_json,
)
from signing.json_input import MAX_INTEGER_DIGITS, has_long_digit_run
from tests.signing.conftest import TESTDATA

CARDS = sorted(path for path in (TESTDATA / "cards").glob("*.json") if path.name != "INDEX.json")


def nested(depth: int, inner: str = "1") -> bytes:
    return ("[" * depth + inner + "]" * depth).encode()


@pytest.mark.parametrize("path", CARDS, ids=lambda path: path.name)
def test_real_cards_read_exactly_as_json_reads_them(path: Any) -> None:
    raw = path.read_bytes()
    assert loads_json(raw) == json.loads(raw)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 123456789012345678901234567890, "b": -9223372036854775809}',  # exact beyond 64 bits
        '{"s": "ünïcödé ✓ \\ud83d\\ude00", "f": 0.1, "e": 1e300, "n": null, "t": [true, false]}',
        '{"url": "https://x.example:8443/a", "time": "12:00:00", "a\\"b:": "\\\\\\":"}',
        '[1, 2.5, "x", {"k": {}}, [], ""]',
    ],
)
def test_valid_documents_read_as_json_reads_them(text: str) -> None:
    assert loads_json(text.encode()) == json.loads(text)
    assert loads_json(text) == json.loads(text)


def test_nesting_up_to_the_limit_is_read_and_beyond_it_refused_naming_the_limit() -> None:
    assert loads_json(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    for depth in (MAX_JSON_DEPTH + 1, 1_025, 100_000):
        with pytest.raises(JsonTooDeepError, match=f"at most {MAX_JSON_DEPTH}") as refused:
            loads_json(nested(depth))
        assert refused.value.limit == MAX_JSON_DEPTH and refused.value.path == "$"


def test_depth_is_refused_on_the_slow_path_too_never_as_a_recursion_error() -> None:
    # A 19-digit run and a lone surrogate send the text to `json`, which would recurse 1,025 deep.
    for inner in ("1234567890123456789012", '"\\ud800"', "NaN"):
        with pytest.raises(JsonTooDeepError):
            loads_json(nested(1_025, inner))


def test_depth_counts_only_brackets_outside_strings() -> None:
    text = json.dumps({"ascii art": "[{" * 500, "quoted": '\\"[[[' * 50, "list": [[["x"]]]})
    assert loads_json(text) == json.loads(text)
    mixed = '{"a": ' * 40 + "[" * 30 + "1" + "]" * 30 + "}" * 40
    with pytest.raises(JsonTooDeepError):
        loads_json(mixed)


def test_a_lower_limit_can_be_asked_for() -> None:
    assert loads_json(b"[[1]]", max_depth=2) == [[1]]
    with pytest.raises(JsonTooDeepError, match="at most 1 are accepted"):
        loads_json(b"[[1]]", max_depth=1)


@pytest.mark.parametrize(
    ("text", "path", "name"),
    [
        ('{"name": "Evil", "name": "Weather Agent"}', "$.name", "name"),
        ('{"skills": [{"id": "a"}, {"id": "b", "tags": [], "id": "c"}]}', "$.skills[1].id", "id"),
        ('{"a b": 1, "a b": 2}', '$["a b"]', "a b"),
        ('{"a": 1, "\\u0061": 2}', "$.a", "a"),  # the same name, written two ways
        ('{"u": "http\\u003a//x", "a": 1, "a": 2}', "$.a", "a"),  # a colon escape cannot mask it
        ('{"n": 12345678901234567890123, "k": 1, "k": 2}', "$.k", "k"),  # read by `json`
    ],
)
def test_a_repeated_member_name_is_refused_with_its_path(text: str, path: str, name: str) -> None:
    with pytest.raises(DuplicateMemberError) as refused:
        loads_json(text.encode())
    assert (refused.value.path, refused.value.name) == (path, name)
    assert path in str(refused.value) and json.dumps(name) in str(refused.value)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"skills": [{"name": "\\ud800"}]}', "$.skills[0].name"),
        ('{"skills": [{"name": "x\\udc00y"}]}', "$.skills[0].name"),  # a low surrogate alone
        ('{"skills": [{"\\ud800": 1}]}', '$.skills[0]["\\ud800"]'),  # in a member name
        ('{"a": "\\ud83d\\ud83d\\ude00"}', "$.a"),  # a pair preceded by a lone high surrogate
        ('{"a": ["\\ude00\\ud83d"]}', "$.a[0]"),  # a pair in the wrong order
    ],
)
def test_an_unpaired_surrogate_is_refused_with_its_path(text: str, path: str) -> None:
    with pytest.raises(LoneSurrogateError) as refused:
        loads_json(text.encode())
    assert refused.value.path == path and path in str(refused.value)
    str(refused.value).encode("utf-8")  # the message itself is printable, storable text


def test_surrogates_written_as_raw_bytes_or_in_text_are_refused_too() -> None:
    with pytest.raises(LoneSurrogateError):
        loads_json(b'{"a": "\xed\xa0\x80"}')  # UTF-8 of U+D800, which `json` would let through
    with pytest.raises(LoneSurrogateError):
        loads_json('{"a": "\ud800"}')


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b"[Infinity]", "Infinity is not a JSON number"),
        (b"[1e400]", "beyond the range"),
        (b"", "Expecting value at line 1, column 1"),
        (b'{"a": 1,}', "line 1"),
        (b"\xff\xfe\xfd", "not JSON"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
)
def test_what_is_not_json_is_a_syntax_error_saying_why(data: bytes, needle: str) -> None:
    with pytest.raises(JsonSyntaxError, match=re.escape(needle)):
        loads_json(data)


def test_integers_up_to_pythons_digit_limit_are_read_exactly_and_longer_ones_refused() -> None:
    at_limit = "-" + "7" * MAX_INTEGER_DIGITS
    assert loads_json(f"[{at_limit}]") == [int(at_limit)]
    with pytest.raises(JsonSyntaxError, match=f"more than {MAX_INTEGER_DIGITS} digits"):
        loads_json(b'{"a": ' + b"7" * (MAX_INTEGER_DIGITS + 1) + b"}")  # int() would raise a bare ValueError


def test_errors_are_value_errors_as_json_errors_are() -> None:
    with pytest.raises(ValueError):
        loads_json(b'{"a": 1, "a": 1}')


def test_utf16_and_a_utf8_byte_order_mark_are_read() -> None:
    assert loads_json('{"a": "é"}'.encode("utf-16")) == {"a": "é"}
    assert loads_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


@given(st.text(alphabet=st.sampled_from('0123456789 .-e"x\u0660\u00e9'), max_size=60))
def test_long_digit_runs_are_found_exactly_where_a_scan_for_19_ascii_digits_finds_them(text: str) -> None:
    expected = re.search(r"[0-9]{19}", text) is not None
    assert has_long_digit_run(text) is expected
    assert has_long_digit_run(text.encode()) is expected


# Text with what makes the fast path's counting hard: colons, quotes, backslashes, brackets.
_TEXT = st.text(alphabet=st.sampled_from(':"\\[]{}a é😀'), max_size=8)
_NAMES = st.text(alphabet=st.sampled_from(':"\\ab'), max_size=3)


def _string(text: str, escape_all: bool) -> str:
    """A JSON string for `text`; with `escape_all`, every character as a \\u escape."""
    if not escape_all:
        return json.dumps(text, ensure_ascii=False)
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, bool]:
    """An object's text, written member by member, and whether some name in it repeats."""
    names = draw(st.lists(_NAMES, min_size=1, max_size=6))
    members = []
    for name in names:
        value = draw(st.one_of(st.integers(), _TEXT.map(lambda t: json.dumps(t)), st.just('{"x": [":"]}')))
        members.append(f"{_string(name, draw(st.booleans()))}: {value}")
    return "{" + ", ".join(members) + "}", len(set(names)) != len(names)


@given(_documents())
def test_a_repeated_name_is_found_however_the_text_is_written(document: tuple[str, bool]) -> None:
    text, repeats = document
    if repeats:
        with pytest.raises(DuplicateMemberError):
            loads_json(text.encode())
    else:
        assert loads_json(text.encode()) == json.loads(text)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
)


@given(_VALUES, st.booleans())
def test_the_depth_limit_falls_exactly_at_the_documents_depth(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth = _depth(value)
    assert loads_json(text, max_depth=depth) == value
    if depth:
        with pytest.raises(JsonTooDeepError):
            loads_json(text, max_depth=depth - 1)


SHAPES = {  # documents about n levels deep, with more brackets than levels
    "empty array innermost": lambda n: "[{}, " * n + "[]" + "]" * n,
    "empty object innermost": lambda n: "[{}, " * n + "{}" + "]" * n,
    "a value innermost": lambda n: "[[], " * n + "[1]" + "]" * n,
    "member values": lambda n: '{"s": [], "a": ' * n + "[]" + "}" * n,
    "siblings after": lambda n: "[" * n + "[]" + ", {}]" * n,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_documents_with_many_brackets_are_measured_exactly_at_the_limit(shape: str) -> None:
    for n in (MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH):
        text = SHAPES[shape](n)
        depth = _depth(json.loads(text))
        assert text.count("[") + text.count("{") > depth
        assert loads_json(text, max_depth=depth) == json.loads(text)
        with pytest.raises(JsonTooDeepError):
            loads_json(text, max_depth=depth - 1)
        assert (depth <= MAX_JSON_DEPTH) is _read(text)


def _read(text: str) -> bool:
    try:
        loads_json(text)
    except JsonTooDeepError:
        return False
    return True


def test_depths_orjson_reads_but_cannot_write_are_measured_too() -> None:
    text = "[1, " * 500 + "1" + "]" * 500  # no two brackets together: orjson reads it (up to 1,024 levels)
    with pytest.raises(JsonTooDeepError):
        loads_json(text)
    deepest = "[1, " * 200 + "1" + "]" * 200
    assert loads_json(deepest, max_depth=200) == json.loads(deepest)
    with pytest.raises(ValueError, match="max_depth must be between 0 and 200"):
        loads_json(deepest, max_depth=201)


# Any value `json` can write (no repeated names, no lone surrogates, finite numbers), nested well
# within the limit, written in any of the ways `json` writes it.
_ANY_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**60), max_value=10**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | _TEXT
)
_ANY_VALUE = st.recursive(
    _ANY_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_NAMES | _TEXT, inner, max_size=4)
)


@given(
    _ANY_VALUE,
    st.booleans(),
    st.sampled_from([None, 0, 2, "\t"]),
    st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]),
)
def test_what_json_writes_is_read_as_json_reads_it(value: Any, ascii_only: bool, indent: Any, separators: Any) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent, separators=separators)
    assert _depth(value) <= MAX_JSON_DEPTH
    for data in (text, text.encode()):
        read = loads_json(data)
        assert json.dumps(read) == json.dumps(json.loads(text))  # types too: 1 and 1.0, -0.0 and 0.0
