"""What the manifest keeps between requests in each web process, and how every process learns of
a change made by any other: from the database, never from in-process events.

`ListingWatch` reads the catalog's change marker (a few index look-ups) at most every
`check_every` seconds, and only when it moved the listed blocks (one pass over the agents), so a
process serves its cached pages for at most that long after a change elsewhere; it reads the
blocks every `reread_every` seconds anyway, for a change the marker cannot see (two writers
committing out of the order of their clocks). `PageCache` keeps each page's entries, serialized,
until its block changes or it grows `max_age` old: the health and signature state an entry shows
change without moving the marker, and come in that late at most. A change thus rebuilds the page
it is on, not every page.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from registry.catalog import CatalogListing, ListedBlock

CHECK_EVERY = 1.0
REREAD_EVERY = 60.0
MAX_AGE = 300.0
MAX_BYTES = 64 * 1024 * 1024
MAX_KEPT = 48  # fragments of top documents: three per public base URL


@dataclasses.dataclass(frozen=True)
class ManifestPages:
    """The listed blocks (one manifest page each) as last read; `version` moves when any changes."""

    version: int
    blocks: tuple[ListedBlock, ...]

    def block(self, number: int) -> ListedBlock | None:
        return next((block for block in self.blocks if block.number == number), None)

    @property
    def last(self) -> int:
        return self.blocks[-1].number if self.blocks else 0


class ListingWatch:
    """The manifest's pages, at most `check_every` seconds old (`reread_every` at the latest, for a
    change that moved no marker). While one thread reads the database, the others keep serving the
    pages it is replacing."""

    def __init__(
        self,
        listing: CatalogListing,
        page_size: int,
        *,
        check_every: float = CHECK_EVERY,
        reread_every: float = REREAD_EVERY,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._listing = listing
        self._page_size = page_size
        self._check_every = check_every
        self._reread_every = reread_every
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._pages: ManifestPages | None = None
        self._marker: tuple[Any, ...] | None = None
        self._next_check = self._reread_at = 0.0

    def pages(self) -> ManifestPages:
        pages = self._pages
        if pages is not None and self._monotonic() < self._next_check:
            return pages
        if not self._lock.acquire(blocking=pages is None):
            assert pages is not None  # only the first read waits for the lock
            return pages
        try:
            return self._refresh()
        finally:
            self._lock.release()

    def _refresh(self) -> ManifestPages:
        now = self._monotonic()
        if self._pages is not None and now < self._next_check:
            return self._pages  # refreshed by the thread this one waited for
        self._next_check = now + self._check_every
        # The marker is read before the blocks: a change between the two moves it again, so the
        # next check reads the blocks once more rather than keeping a marker newer than they are.
        marker = self._listing.change_marker()
        if self._pages is None or marker != self._marker or now >= self._reread_at:
            blocks = tuple(self._listing.blocks(self._page_size))
            self._marker, self._reread_at = marker, now + self._reread_every
            if self._pages is None or blocks != self._pages.blocks:
                self._pages = ManifestPages((self._pages.version + 1) if self._pages else 1, blocks)
        return self._pages


class NoListing:
    """The watch when the manifest lists no agents (AGENTDEX_ARD_LIST_AGENTS off): no pages."""

    def pages(self) -> ManifestPages:
        return ManifestPages(0, ())


@dataclasses.dataclass(frozen=True)
class Fragment:
    """Serialized entries, comma-separated, ready to go between a document's `[` and `]`."""

    body: bytes
    digest: str
    source: Hashable  # what it was built from (a block's fingerprint)
    built_at: float

    @classmethod
    def of(cls, entries: list[bytes], source: Hashable, built_at: float) -> Fragment:
        body = b",".join(entries)
        return cls(body, hashlib.sha256(body).hexdigest(), source, built_at)


class PageCache:
    """Fragments by key, rebuilt when their source changed or after `max_age` seconds. The least
    recently used go past `max_bytes` (a page of 1,000 agents is about a megabyte), except those
    `kept`: the top document's, which a crawler reading every page once must not push out. Two
    threads may build the same fragment at once; either result is right."""

    def __init__(
        self,
        *,
        max_bytes: int = MAX_BYTES,
        max_age: float = MAX_AGE,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_bytes = max_bytes
        self._max_age = max_age
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._fragments: collections.OrderedDict[Hashable, Fragment] = collections.OrderedDict()
        self._bytes = 0
        self._kept: dict[Hashable, Fragment] = {}

    def get(self, key: Hashable, source: Hashable, build: Callable[[], list[bytes]], *, kept: bool = False) -> Fragment:
        now = self._monotonic()
        with self._lock:
            fragment = (self._kept if kept else self._fragments).get(key)
            if fragment is not None and fragment.source == source and now - fragment.built_at < self._max_age:
                if not kept:
                    self._fragments.move_to_end(key)
                return fragment
        fragment = Fragment.of(build(), source, now)  # outside the lock: a page is a query and ~1 MB
        with self._lock:
            self._keep(key, fragment) if kept else self._put(key, fragment)
        return fragment

    def _keep(self, key: Hashable, fragment: Fragment) -> None:
        if key not in self._kept and len(self._kept) >= MAX_KEPT:
            self._kept.clear()  # public hosts the proxy let through vary: keep the memory bounded
        self._kept[key] = fragment

    def _put(self, key: Hashable, fragment: Fragment) -> None:
        old = self._fragments.pop(key, None)
        self._bytes -= len(old.body) if old else 0
        self._fragments[key] = fragment
        self._bytes += len(fragment.body)
        while self._bytes > self._max_bytes and len(self._fragments) > 1:
            _, dropped = self._fragments.popitem(last=False)
            self._bytes -= len(dropped.body)
