"""Page tokens of the ARD API, and one page merged from several sources' ranked pages.

A search's sources are this registry's own index (source 0) and, federated, its upstreams (source
i + 1 for `upstreams[i]`). The token keeps each source's place: its own token for the page it was
read from (ours: `index.LocalPlace`; an upstream's: its `pageToken`) and how many results of that
page are shown already. Every page of a federated search asks each source again from its place,
and merges (`merge`) exactly: results best score first, ours first on a tie, and a page ends early
when a source that has more pages ran out of read results (its next result could outrank the rest).
Duplicates (by identifier) are left out within a page; one that two sources rank far apart can
appear again on a later page. An upstream that fails on a page is left out of the following ones.

Tokens also hold a fingerprint of the query (and of the upstream list): a token used with another
query is refused rather than answered with a page of something else.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
from typing import Any

from registry import jsontext
from registry.discovery.search.request import InvalidArgument

MAX_TOKEN_CHARS = 16_384
TOKEN_VERSION = 1
_REFUSED = "pageToken is not one this registry issued for this query; start again without it"


@dataclasses.dataclass(frozen=True)
class Place:
    """A source's place: its token for the page to read (None: its first), and how many results
    of that page are done."""

    source: int
    token: str | None = None
    skip: int = 0


@dataclasses.dataclass(frozen=True)
class Window:
    """What a source gave for this page: its results from its place on, and its next token."""

    place: Place
    results: list[dict[str, Any]]
    next_token: str | None


def fingerprint(*parts: Any) -> str:
    return hashlib.sha256(jsontext.canonical(list(parts))).hexdigest()[:16]


def encode_token(query: str, places: list[Place]) -> str | None:
    """The token of the next page (None: this was the last)."""
    if not places:
        return None
    body = {"v": TOKEN_VERSION, "q": query, "p": [[p.source, p.token, p.skip] for p in places]}
    return base64.urlsafe_b64encode(jsontext.dumps(body)).decode("ascii").rstrip("=")


def decode_token(token: str | None, query: str, sources: int) -> list[Place] | None:
    """The places a token holds (None without a token). Raises InvalidArgument for a token that
    is not ours, or not of this query, or names a source that is not there."""
    if not token:
        return None
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidArgument(_REFUSED)
    try:
        body = jsontext.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        places = [Place(int(source), place_token, int(skip)) for source, place_token, skip in body["p"]]
        valid = body["v"] == TOKEN_VERSION and body["q"] == query
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise InvalidArgument(_REFUSED) from None
    for place in places:
        valid = valid and 0 <= place.source < sources and place.skip >= 0
        valid = valid and (place.token is None or isinstance(place.token, str))
    if not valid or len({place.source for place in places}) != len(places):
        raise InvalidArgument(_REFUSED)
    return places


def merge(windows: list[Window], size: int) -> tuple[list[dict[str, Any]], list[Place]]:
    """Up to `size` results from the sources' windows, best score first (the lower source first on
    a tie, each source's own order kept), and every source's place after them."""
    taken: list[dict[str, Any]] = []
    shown: set[str] = set()
    used = [0] * len(windows)
    while len(taken) < size:
        if any(used[i] >= len(w.results) and w.next_token for i, w in enumerate(windows)):
            break  # a source ran out of what was read of it, and has more
        heads = [i for i, w in enumerate(windows) if used[i] < len(w.results)]
        if not heads:
            break
        best = max(heads, key=lambda i: (windows[i].results[used[i]]["score"], -windows[i].place.source))
        result = windows[best].results[used[best]]
        used[best] += 1
        if result["identifier"] not in shown:
            shown.add(result["identifier"])
            taken.append(result)
    return taken, [place for i, w in enumerate(windows) if (place := _after(w, used[i])) is not None]


def _after(window: Window, used: int) -> Place | None:
    if used < len(window.results):
        return dataclasses.replace(window.place, skip=window.place.skip + used)
    if window.next_token:
        return Place(window.place.source, window.next_token, 0)
    return None
