"""JSON on the hot paths (request bodies, stored renderings, responses) through orjson, with the
standard library behind it for what orjson refuses, so nothing that parsed before stops parsing.

orjson is about ten times faster at encoding and two to three times at decoding; registration
and search encode and decode several documents per request.
"""

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


# orjson writes what `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes,
# but for floats from 1e-10 to 1e-4: `0.00001` and `1e-6` where `json` writes `1e-05` and `1e-06`.
# With every digit read as "0", such a float shows "0.0000" or "e-0", and the text is then written
# by `json` (so is one that merely looks so: a float of 1e-10 or less, a string holding "e-7").
_DIGITS_READ_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 else byte for byte in range(256))


def canonical(value: Any) -> bytes:
    """Sorted-key compact UTF-8 JSON, exactly as `json.dumps(value, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)` writes it, faster: 8–12 µs for a bench card
    against ~30."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # beyond 64 bits, a lone surrogate
        text = None
    if text is not None:
        digits = text.translate(_DIGITS_READ_AS_ZERO)
        if b"0.0000" not in digits and b"e-0" not in digits:
            return text
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# orjson reads integers beyond 64 bits as floats; a document with a run of 19+ digits anywhere
# (in a number or, harmlessly, a string) is parsed by `json`, which keeps them exact. The run is
# found by mapping every ASCII digit to "0" and every other byte to " ": a regular expression
# scan cost four times as much as orjson's whole parse.
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
