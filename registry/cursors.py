"""Opaque pagination cursors: the last primary key a page held, so that the next page starts
after it (cursors, never offsets: a page stays correct while rows are added)."""

from __future__ import annotations

import base64
import binascii
import math

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


RankKey = tuple[float, int, int, int]  # a ranked result's place: -score, health, signature, pk


def encode_ranked_cursor(key: RankKey) -> str:
    """After the ranked result whose place is `key` (`registry.catalog.ranking`)."""
    raw = "r:" + ":".join([repr(key[0]), *(str(part) for part in key[1:])])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_ranked_cursor(cursor: str | None) -> RankKey | None:
    """The place of the last ranked result seen (None without a cursor). Raises InvalidRequest for
    a cursor we did not issue, or one of an unranked search."""
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, score, health, signature, pk = raw.split(":")
        place, health_rank, signature_rank, last_pk = float(score), int(health), int(signature), parse_pk(pk)
        ranks_valid = 0 <= health_rank < 10 and 0 <= signature_rank < 10
        if kind == "r" and last_pk is not None and math.isfinite(place) and ranks_valid:
            return place, health_rank, signature_rank, last_pk
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidRequest("cursor is not one of this ranked search; start again without it")
