"""The one reader of JSON that comes from outside (request bodies, card and key files, JWS
headers, fetched JWKS): RFC 8259 text, held to the I-JSON rules (RFC 7493) that make a document
mean the same to every reader.

Refused, each as a `JsonInputError` whose `path` says where (`$.skills[0].name`):

- arrays and objects nested deeper than `max_depth` (MAX_DEPTH = 64). Parsing cost never grows
  with depth: a run of more `[` than the limit is measured before any parser runs; otherwise orjson
  (in C, and stopping at 1,024 levels by itself) reads the text and its indented rendering
  shows the depth; `json`, which recurses, only reads text whose depth was measured first;
- a member name repeated in one object (RFC 7493 §2.3; RFC 7515 §5.2 for JWS headers): `json`
  keeps the last value, other readers the first, so a signed card could name one agent to a
  verifier and another to its users;
- an unpaired UTF-16 surrogate (`"\\ud800"`) in a name or a string: not Unicode text (RFC 7493
  §2.1), and nothing downstream can store or print it;
- NaN, Infinity, numbers beyond double range, integers of more than MAX_INTEGER_DIGITS (4,300)
  digits, and anything else that is not JSON.

Integers beyond 64 bits stay exact. UTF-8 is expected; UTF-16 and UTF-32 are read as `json`
reads them, and a byte order mark is ignored (RFC 8259 §8.1).
"""

from __future__ import annotations

import array
import itertools
import json
import math
import re
import sys
from typing import Any

import orjson

from signing.errors import DuplicateMemberError, JsonInputError, JsonSyntaxError, JsonTooDeepError, LoneSurrogateError

MAX_DEPTH = 64
MAX_SUPPORTED_DEPTH = 200  # a larger `max_depth` would let the checks below recurse near Python's limit

# orjson reads integers beyond 64 bits as floats; a text with a run of 19+ digits anywhere (in a
# number or, harmlessly, a string) is read by `json`, which keeps them exact.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19
# An opening bracket steps one level in (1), a closing one out (-1 as a signed byte).
_DEPTH_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_SURROGATE = re.compile("[\ud800-\udfff]")  # after decoding, a paired one is a single code point
_SURROGATE_TEXT = "holds an unpaired UTF-16 surrogate (such as \\ud800), which is not Unicode text (RFC 7493 §2.1)"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SHOWN_NAME = 60
# Python refuses to read longer integers from text (a ValueError that is not a JSONDecodeError);
# the reader refuses them first, as not JSON it can read.
MAX_INTEGER_DIGITS = sys.int_info.default_max_str_digits

Path = tuple[str | int, ...]


def loads(data: bytes | bytearray | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `data` (bytes, UTF-8 unless they say otherwise, or text).

    Raises JsonTooDeepError, DuplicateMemberError, LoneSurrogateError or JsonSyntaxError, all
    JsonInputError (a ValueError) with the JSONPath of the place. `max_depth` is at most
    MAX_SUPPORTED_DEPTH (else ValueError: a caller's mistake, not the input's).
    """
    if not 0 <= max_depth <= MAX_SUPPORTED_DEPTH:
        raise ValueError(f"max_depth must be between 0 and {MAX_SUPPORTED_DEPTH}, not {max_depth}")
    text = _utf8(data)
    if b"[" * (max_depth + 1) in text:  # how a deep body usually looks: measured before any parsing
        _check_depth(text, max_depth)
    if not has_long_digit_run(text):
        try:
            value = orjson.loads(text)  # in C, and never deeper than its own limit of 1,024
        except orjson.JSONDecodeError:
            pass  # read again below, which says why and where
        else:
            if _rendering_agrees(text, value, max_depth):
                return value
    _check_depth(text, max_depth)  # exactly, before `json`, which recurses
    return _read_checked(text, max_depth)


def has_long_digit_run(data: bytes | str) -> bool:
    """Whether `data` holds 19 or more ASCII digits in a row (orjson would round such a number)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return _LONG_RUN in data.translate(_DIGITS_AS_ZERO)


def _utf8(data: bytes | bytearray | str) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")  # a lone surrogate in it is found with its path
    data = bytes(data)
    if len(data) > 1 and 0 < data[0] < 0x80 and data[1]:
        return data  # neither a byte order mark nor UTF-16/32: what `json.detect_encoding` calls UTF-8
    encoding = json.detect_encoding(data)
    if encoding == "utf-8":
        return data
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonSyntaxError(f"not JSON: the text is not {encoding} ({error.reason} at byte {error.start})") from None


def _check_depth(text: bytes, max_depth: int) -> None:
    if text.count(b"[") + text.count(b"{") <= max_depth:
        return  # fewer brackets than the limit, wherever they are
    steps = _outside_strings(text).translate(_DEPTH_STEPS, _NOT_BRACKETS)
    if b"\x01" * (max_depth + 1) in steps or _deepest(steps) > max_depth:  # a run is found without adding up
        raise _too_deep(max_depth)


def _deepest(steps: bytes) -> int:
    return max(itertools.accumulate(array.array("b", steps)), default=0)


def _too_deep(max_depth: int) -> JsonTooDeepError:
    message = f"the JSON nests arrays and objects more than {max_depth} levels deep; at most {max_depth} are accepted"
    return JsonTooDeepError(message, max_depth)


def _outside_strings(text: bytes) -> bytes:
    """The text without its strings. Escaped backslashes go first: a quote still preceded by a
    backslash after that is escaped, and what remains of the quotes delimit strings."""
    unescaped = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(unescaped.split(b'"')[::2])


def _rendering_agrees(text: bytes, value: Any, max_depth: int) -> bool:
    """Whether orjson's reading is within `max_depth` (else raises JsonTooDeepError) and kept
    every member of the text (orjson keeps the last of repeated names; False sends the text to
    the slow reading, which names the member).

    Depth: indented, the contents of a container `max_depth` levels deep sit on lines of
    2 x max_depth spaces, so without such a line nothing is deeper; with one (rare), the text is
    measured. Members: each has one ':' outside strings, and strings keep theirs, so the text
    and the rendering hold as many colons unless a name was dropped or a colon was escaped."""
    few = text.count(b"[") + text.count(b"{") <= max_depth  # then not too deep, wherever they are
    try:
        rendering = orjson.dumps(value) if few else orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson writes at most 254 levels (it reads up to 1,024)
        _check_depth(text, max_depth)
        return False
    if not few and (max_depth < 1 or b"\n" + b"  " * max_depth in rendering):
        _check_depth(text, max_depth)
    if b"\\u003" in text and (b"\\u003a" in text or b"\\u003A" in text):
        return False
    return rendering.count(b":") == text.count(b":")


class _Members(list[tuple[str, Any]]):
    """One object's members in order, before their names are checked."""

    __slots__ = ()


def _refuse_constant(name: str) -> Any:
    raise JsonSyntaxError(f"not JSON: {name} is not a JSON number (RFC 8259 §6)")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonSyntaxError(f"not JSON: the number {text[:40]} is beyond the range of a double-precision number")
    return value


def _whole(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INTEGER_DIGITS:
        raise JsonSyntaxError(f"not JSON: the integer {text[:40]}… has more than {MAX_INTEGER_DIGITS} digits")
    return int(text)


def _read_checked(text: bytes, max_depth: int) -> Any:
    """`json`'s reading, every object's members kept, then checked with their paths."""
    hooks: dict[str, Any] = {"parse_constant": _refuse_constant, "parse_float": _finite, "parse_int": _whole}
    try:
        tree = json.loads(text, object_pairs_hook=_Members, **hooks)
        return _checked(tree, ())
    except JsonInputError:
        raise
    except RecursionError:  # not with depths measured first, below MAX_SUPPORTED_DEPTH
        raise _too_deep(max_depth) from None
    except UnicodeDecodeError as error:
        raise JsonSyntaxError(f"not JSON: the text is not UTF-8 ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise JsonSyntaxError(f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None


def _checked(value: Any, path: Path) -> Any:
    kind = type(value)
    if kind is _Members:
        return _checked_object(value, path)
    if kind is list:
        return [_checked(item, (*path, index)) for index, item in enumerate(value)]
    if kind is str and _SURROGATE.search(value):
        raise LoneSurrogateError(f"the string at {json_path(path)} {_SURROGATE_TEXT}", json_path(path))
    return value


def _checked_object(pairs: _Members, path: Path) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name, member in pairs:
        where = (*path, name)
        if _SURROGATE.search(name):
            raise LoneSurrogateError(f"the member name at {json_path(where)} {_SURROGATE_TEXT}", json_path(where))
        if name in members:
            message = f"the member name {_shown(name)} appears more than once at {json_path(where)}"
            raise DuplicateMemberError(
                f"{message}; the names in a JSON object must be unique (RFC 7493 §2.3)", json_path(where), name
            )
        members[name] = _checked(member, where)
    return members


def json_path(path: Path) -> str:
    """`$.skills[0].name`; names that are not identifiers in brackets: `$["a b"]`."""
    parts = ["$"]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _IDENTIFIER.match(step):
            parts.append(f".{step}")
        else:
            parts.append(f"[{_shown(step)}]")
    return "".join(parts)


def _shown(name: str) -> str:
    """A name as a JSON string a person can read: escaped where it is not Unicode, cut when long."""
    cut = name if len(name) <= _SHOWN_NAME else name[:_SHOWN_NAME] + "…"
    return json.dumps(cut, ensure_ascii=bool(_SURROGATE.search(cut)))
