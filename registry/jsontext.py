"""JSON on the hot paths (request bodies, stored renderings, responses) through orjson, with the
standard library behind it for what orjson cannot write; read with `signing.json_input`'s strict
reader, the one every JSON input goes through."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from signing import json_input
from signing.errors import JsonInputError

MAX_JSON_DEPTH = json_input.MAX_DEPTH

# With a `default`, dates and dataclasses go to it as they would with `json`, instead of orjson's
# own rendering.
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Compact UTF-8 JSON (no key sorting). Integers beyond 64 bits fall back to `json`."""
    try:
        return orjson.dumps(value, default=default, option=_PASSTHROUGH if default else None)
    except TypeError:  # e.g. an integer orjson cannot represent; the standard library can
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=default).encode("utf-8")


def dumps_text(value: Any) -> str:
    return dumps(value).decode("utf-8")


def canonical(value: Any) -> bytes:
    """Sorted-key compact UTF-8 JSON: the same bytes for the same content whatever the key order
    (a card's identity for change detection; signing uses RFC 8785 in `signing`)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # beyond 64 bits, a lone surrogate
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class NulCharacterError(JsonInputError):
    """A string or member name holds U+0000. JSON allows it, but PostgreSQL's text cannot hold it,
    so the registry refuses it on the way in (on SQLite too: the same answer on both)."""


def loads_input(data: bytes | str) -> Any:
    """`loads`, for what comes from outside and may be stored (request bodies, fetched cards and
    answers): also refuses U+0000 in any string or member name. Raises JsonInputError."""
    value = loads(data)
    refuse_nul(value, data)
    return value


def refuse_nul(value: Any, data: bytes | str) -> None:
    """Raises NulCharacterError when `value`, read from the JSON text `data`, holds U+0000 in a
    string or member name, naming the first such place."""
    text = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"\\u0000" in text:  # the only way JSON can write U+0000
        _refuse_nul(value, ())


def _refuse_nul(value: Any, path: json_input.Path) -> None:
    if isinstance(value, str) and "\x00" in value:
        where = json_input.json_path(path)
        raise NulCharacterError(f"the string at {where} holds a NUL character (U+0000), which is not accepted", where)
    if isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_nul(item, (*path, index))
    elif isinstance(value, dict):
        for name, member in value.items():
            _refuse_nul(name, (*path, name))
            _refuse_nul(member, (*path, name))


def loads(data: bytes | str) -> Any:
    """Parse JSON with the one strict reader (`signing.json_input`): orjson's speed, integers
    beyond 64 bits exact, and no text that readers could disagree on (depth over
    MAX_JSON_DEPTH, repeated member names, lone surrogates, NaN). Raises JsonInputError, a
    ValueError naming the JSONPath of the place."""
    return json_input.loads(data)


def loads_stored(data: bytes | str) -> Any:
    """Parse JSON the registry wrote itself (stored renderings such as an agent's profile): read
    strictly when it came in, so here only orjson, with `json` for integers beyond 64 bits."""
    if json_input.has_long_digit_run(data):
        return json.loads(data)
    return orjson.loads(data)
