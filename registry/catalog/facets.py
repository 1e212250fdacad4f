"""Facets: how many of a query's matching agents carry each value of a kind (ARD's explore, v0.91
§5.3.3), as `CatalogSearch.facets` counts them. Values are as the catalog indexes them: hosts are
card URLs' hosts, protocol versions come with their major.minor ("0.3.0" and "0.3").

Which agents: those the query matches, as search finds them (the same default status and hiding
of dead agents); with text, the first TEXT_MATCHES that the ranked search finds for it (ARD's
relevance cutoff: the agents search would page through).

How they are counted. Up to LIVE_MATCHES agents (and a text query's): for the request, in one
statement over those agents' terms. More: over the catalog's indexes, a cost that grows with the
catalog, so the facet is kept by the process until the catalog changes and for at most
KEPT_SECONDS. A change is a new audit entry (every registration, card, status change and removal
writes one in its transaction); health and signature states change without one, and dead agents
leave the default as time passes: the seconds bound those. The query of no filter but the defaults
is counted from the whole catalog's most carried values, less the agents it leaves out (another
status, hidden as dead), its tags from `tag_counts`; any other, from its matching agents' terms.
"""

from __future__ import annotations

import collections
import dataclasses
import heapq
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from registry.catalog.any_of import KINDS
from registry.catalog.records import ACTIVE
from registry.catalog.store import CatalogStore
from registry.catalog.store_facets import Counts
from registry.catalog.store_search import SearchFilters
from registry.errors import InvalidRequest

TEXT_MATCHES = 1000
LIVE_MATCHES = 2000
KEPT_SECONDS = 30.0
MAX_KEPT = 512  # facets kept per process
MAX_FACET_LIMIT = 1000
EVERY_MATCH = 1 << 40


@dataclasses.dataclass(frozen=True)
class Facet:
    """A kind's values among a query's matches: `buckets`, (value, how many matching agents carry
    it), most carried first, then by value, at most the limit asked, none under its minimum count;
    `other_count`, how many (agent, value) pairs of matching agents are in no bucket (values past
    the limit or under the minimum). The buckets' counts and `other_count` add up to every value
    of the kind carried by every match: for kinds of one value per agent (host, health, status,
    sig), the number of matching agents with one."""

    buckets: list[tuple[str, int]]
    other_count: int


def check_facet_request(kinds: Sequence[str], limit: int, min_count: int) -> None:
    """Raises InvalidRequest for an unknown kind, a limit outside 1…MAX_FACET_LIMIT, or a
    negative minimum count."""
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise InvalidRequest(f"no facet of kind {unknown[0]!r}: the kinds are {', '.join(KINDS)}")
    if not 1 <= limit <= MAX_FACET_LIMIT:
        raise InvalidRequest(f"a facet's limit is 1 to {MAX_FACET_LIMIT}, not {limit}")
    if min_count < 0:
        raise InvalidRequest(f"a facet's minimum count is 0 or more, not {min_count}")


def facet_of(counts: Mapping[str, int], limit: int, min_count: int, total: int | None = None) -> Facet:
    """The facet of `counts` (value → agents), `total` the pairs they come from (default: all)."""
    top = heapq.nsmallest(limit, ((-count, value) for value, count in counts.items() if count >= min_count))
    buckets = [(value, -count) for count, value in top]
    held = sum(counts.values()) if total is None else total
    return Facet(buckets, held - sum(count for _, count in buckets))


class FacetCounter:
    def __init__(
        self,
        store: CatalogStore,
        monotonic: Callable[[], float] = time.monotonic,
        kept_seconds: float = KEPT_SECONDS,
        live_matches: int = LIVE_MATCHES,
    ) -> None:
        self._store = store
        self._kept = _Kept(kept_seconds, monotonic)
        self._live_matches = live_matches

    def among(self, pks: Sequence[int], kinds: Sequence[str], limit: int, min_count: int) -> dict[str, Facet]:
        """Facets of the given agents, counted now."""
        counts = self._store.counts_among(pks, kinds)
        return {kind: facet_of(counts[kind], limit, min_count) for kind in kinds}

    def of(self, filters: SearchFilters, kinds: Sequence[str], limit: int, min_count: int) -> dict[str, Facet]:
        """Facets of the agents matching `filters` (see the module docstring)."""
        marker = self._store.catalog_marker()  # before counting: a write meanwhile is counted again
        keys = {kind: (filters.key(), kind, limit, min_count) for kind in kinds}
        kept = {kind: self._kept.get(key, marker) for kind, key in keys.items()}
        facets = {kind: facet for kind, facet in kept.items() if facet is not None}
        missing = [kind for kind in keys if kind not in facets]
        if not missing:
            return facets
        found = self._store.search(filters, 0, self._live_matches + 1, ("pk",))
        if len(found) <= self._live_matches:
            facets.update(self.among([row.pk for row in found], missing, limit, min_count))
            return {kind: facets[kind] for kind in keys}
        if _defaults_only(filters):
            facets.update(self._catalog_facets(filters, missing, limit, min_count))
        else:
            counts = self._match_counts(filters, [row.pk for row in found], missing)
            facets.update((kind, facet_of(counts[kind], limit, min_count)) for kind in missing)
        for kind in missing:
            self._kept.put(keys[kind], marker, facets[kind])
        return {kind: facets[kind] for kind in keys}

    def _match_counts(self, filters: SearchFilters, first: list[int], kinds: Sequence[str]) -> Counts:
        """The counts of every match, `first` those already found: the search goes on after them."""
        rest = self._store.search(filters, first[-1], EVERY_MATCH, ("pk",))
        return self._store.counts_among([*first, *(row.pk for row in rest)], kinds)

    def _catalog_facets(
        self, filters: SearchFilters, kinds: Sequence[str], limit: int, min_count: int
    ) -> dict[str, Facet]:
        """The whole catalog's most carried values, less the agents the defaults leave out. A value
        outside the catalog's first `limit` + (values those agents carry) cannot be in the facet:
        `limit` values before it keep their counts."""
        status = next((value for kind, value in filters.terms if kind == "status"), filters.status)
        other, dead = self._store.left_out(status, filters.dead_cutoff)
        # `tag_counts` holds the active agents' tags: only the active dead ones are left to take out.
        active_tags = status == ACTIVE and "tag" in kinds
        minus = self._store.counts_among(sorted(other | dead), [k for k in kinds if not (active_tags and k == "tag")])
        if active_tags:
            minus.update(self._store.counts_among(sorted(dead - other), ["tag"]))
        tops = self._store.catalog_top({kind: limit + len(minus[kind]) for kind in kinds}, active_tags)
        facets = {}
        for kind in kinds:
            rows, total = tops[kind]
            counts = collections.Counter(dict(rows))
            counts.subtract(minus[kind])
            kept = {value: count for value, count in counts.items() if count > 0}
            facets[kind] = facet_of(kept, limit, min_count, total - sum(minus[kind].values()))
        return facets


def _defaults_only(filters: SearchFilters) -> bool:
    """Whether the filters are only a status (or none) and the hiding of dead agents."""
    narrowing = [kind for kind, _ in filters.terms if kind != "status"]
    states = filters.health or filters.health_in or filters.status_in
    return not (narrowing or filters.groups() or states or filters.updated_since or filters.among is not None)


class _Kept:
    """Facets counted over many agents, each kept while the catalog's marker is the one it was
    counted under and for at most `ttl` seconds; the least recently used go first."""

    def __init__(self, ttl: float, monotonic: Callable[[], float]) -> None:
        self._ttl, self._monotonic = ttl, monotonic
        self._entries: collections.OrderedDict[Hashable, tuple[Any, float, Facet]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, marker: Any) -> Facet | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != marker or entry[1] <= self._monotonic():
                return None
            self._entries.move_to_end(key)
            return entry[2]

    def put(self, key: Hashable, marker: Any, facet: Facet) -> None:
        with self._lock:
            self._entries[key] = (marker, self._monotonic() + self._ttl, facet)
            self._entries.move_to_end(key)
            while len(self._entries) > MAX_KEPT:
                self._entries.popitem(last=False)
