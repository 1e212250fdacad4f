"""Opaque pagination cursors: the last primary key a page held, so that the next page starts
after it (cursors, never offsets: a page stays correct while rows are added)."""

from __future__ import annotations

import base64
import binascii

from registry.errors import InvalidRequest

# The widest key either database holds (a signed 64-bit BIGINT); a larger number bound to a
# query fails in the driver (OverflowError), so it is no key at all.
MAX_PK = 2**63 - 1


def parse_pk(text: str) -> int | None:
    """`text` as a primary key: ASCII digits (`isdigit` alone takes "²", which `int` refuses) up to
    MAX_PK; None for anything else, which names no row."""
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(MAX_PK))):
        return None
    pk = int(text)
    return pk if pk <= MAX_PK else None


def encode_cursor(pk: int) -> str:
    return base64.urlsafe_b64encode(f"a:{pk}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The last pk seen (0 without a cursor). Raises InvalidRequest for a cursor we did not issue."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, value = raw.split(":", 1)
        pk = parse_pk(value)
        if kind == "a" and pk is not None:
            return pk
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidRequest("cursor is not one this registry issued; start again without it")
