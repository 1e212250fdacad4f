"""Opaque pagination cursors: the last primary key a page held, so that the next page starts
after it (cursors, never offsets: a page stays correct while rows are added)."""

from __future__ import annotations

import base64
import binascii

from registry.errors import InvalidRequest


def encode_cursor(pk: int) -> str:
    return base64.urlsafe_b64encode(f"a:{pk}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The last pk seen (0 without a cursor). Raises InvalidRequest for a cursor we did not issue."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, value = raw.split(":", 1)
        if kind == "a" and value.isdigit():
            return int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidRequest("cursor is not one this registry issued; start again without it")
