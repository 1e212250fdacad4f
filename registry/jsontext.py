"""JSON on the hot paths (request bodies, stored renderings, responses) through orjson, with the
standard library behind it for what orjson refuses, so nothing that parsed with `json` fails."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

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


# orjson reads integers beyond 64 bits as floats; a document with a run of 19+ digits anywhere
# (in a number or, harmlessly, a string) is parsed by `json`, which keeps them exact.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def has_long_digit_run(data: bytes | str) -> bool:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return _LONG_RUN in data.translate(_DIGITS_AS_ZERO)


def loads(data: bytes | str, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """Parse JSON. What orjson rejects or would round (UTF-16 bodies, NaN, integers beyond 64
    bits) is parsed by `json`, whose error, if any, is the one raised (a ValueError)."""
    if has_long_digit_run(data):
        return json.loads(data, parse_constant=parse_constant)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data, parse_constant=parse_constant)
