"""Walking a manifest and its nested catalogs (AI Catalog §"Nested Catalog Entries") into the list
of agents it lists.

Bounds (AI Catalog §"Nested Catalog Depth and Circular References", ADR-0001): the manifest is
depth 1 and catalogs deeper than `max_depth` (4) are refused; a catalog URL already on the path
that leads to it is a cycle, refused; one already read elsewhere in the walk is read once; at
most `max_entries` entries are read in all (nested catalogs count: each may cost a fetch). The
catalogs of one depth are fetched concurrently.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from registry.discovery.crawl.fetch import (
    CatalogDocument,
    DocumentFetcher,
    ManifestAbsent,
    ManifestError,
    ManifestRefused,
    ManifestUnavailable,
)
from registry.discovery.crawl.reader import (
    AgentEntry,
    CatalogEntry,
    OtherEntry,
    Refusal,
    declared_type,
    read_entry,
)
from registry.discovery.entries import A2A_CARD

FETCHERS = 8  # nested catalogs fetched at once
CATALOG_RULES = {
    ManifestAbsent: "ard.catalog-absent",
    ManifestUnavailable: "ard.catalog-unavailable",
    ManifestRefused: "ard.catalog-refused",
}


@dataclasses.dataclass
class Walk:
    """What a manifest lists. `complete`: every catalog it names was read and nothing was cut
    off, so an agent missing from `agents` is really no longer listed."""

    root: CatalogDocument
    agents: list[AgentEntry] = dataclasses.field(default_factory=list)
    refused: list[Refusal] = dataclasses.field(default_factory=list)
    listed: int = 0  # entries that say they are A2A agents, refused ones and older versions included
    ignored: int = 0  # entries of other types, and older versions of an agent listed twice
    catalogs: int = 0  # nested catalogs read
    documents: int = 1  # documents fetched, the manifest included
    complete: bool = True

    def present(self) -> set[str]:
        """Identifiers the manifest still lists, refused ones included (a broken entry is not a
        removed one)."""
        return {agent.identifier for agent in self.agents} | {refusal.identifier for refusal in self.refused}


@dataclasses.dataclass(frozen=True)
class _Catalog:
    document: dict[str, Any]
    url: str  # of the document holding it (an inline catalog has none of its own)
    depth: int
    path: frozenset[str]  # catalog URLs from the manifest down to this one


class ManifestWalker:
    def __init__(
        self, documents: DocumentFetcher, *, max_depth: int, max_entries: int, time_limit: float = 75.0
    ) -> None:
        """`time_limit`: seconds the walk waits for nested catalogs, all together (a publisher
        whose catalogs answer slowly holds one worker for at most that long)."""
        self._documents = documents
        self._max_depth = max_depth
        self._max_entries = max_entries
        self._time_limit = time_limit

    def walk(self, root: CatalogDocument) -> Walk:
        walk = Walk(root)
        deadline = time.monotonic() + self._time_limit
        level = [_Catalog(root.document, root.url, 1, frozenset({root.url}))]
        seen = {root.url}
        budget = self._max_entries
        while level:
            pending: list[tuple[CatalogEntry, _Catalog]] = []
            inline: list[_Catalog] = []
            for catalog in level:
                for position, raw in enumerate(catalog.document["entries"]):
                    if budget <= 0:
                        return _cut_off(walk, self._max_entries)
                    budget -= 1
                    entry = read_entry(raw, catalog.url, position)
                    walk.listed += declared_type(raw) == A2A_CARD
                    self._sort(walk, entry, catalog, seen, pending, inline)
            level = inline + self._fetch(walk, pending, deadline)
        walk.agents = _latest_versions(walk)
        return walk

    def _sort(
        self,
        walk: Walk,
        entry: object,
        parent: _Catalog,
        seen: set[str],
        pending: list[tuple[CatalogEntry, _Catalog]],
        inline: list[_Catalog],
    ) -> None:
        if isinstance(entry, Refusal):
            walk.refused.append(entry)
        elif isinstance(entry, AgentEntry):
            walk.agents.append(entry)
        elif isinstance(entry, OtherEntry):
            walk.ignored += 1
        elif isinstance(entry, CatalogEntry):
            if parent.depth >= self._max_depth:
                walk.refused.append(_too_deep(entry, self._max_depth))
            elif entry.url is None:
                walk.catalogs += 1
                inline.append(_Catalog(entry.data, parent.url, parent.depth + 1, parent.path))
            elif entry.url in parent.path:
                walk.refused.append(Refusal(entry.identifier, "ard.catalog-cycle", f"{entry.url} contains itself"))
            elif entry.url not in seen:
                seen.add(entry.url)
                pending.append((entry, parent))

    def _fetch(self, walk: Walk, pending: list[tuple[CatalogEntry, _Catalog]], deadline: float) -> list[_Catalog]:
        if not pending:
            return []
        with ThreadPoolExecutor(min(FETCHERS, len(pending))) as pool:
            futures = [pool.submit(self._read, entry.url or "") for entry, _ in pending]
            wait(futures, timeout=max(0.0, deadline - time.monotonic()))
            for future in futures:
                future.cancel()  # not started within the time limit: read by the next crawl
        level = []
        for (entry, parent), future in zip(pending, futures):
            if future.cancelled():
                walk.complete = False
                late = f"not read within the crawl's time limit ({self._time_limit:.0f} s)"
                walk.refused.append(Refusal(entry.identifier, "ard.crawl-time-limit", late))
                continue
            answer = future.result()
            if isinstance(answer, ManifestError):
                walk.complete = walk.complete and not isinstance(answer, ManifestUnavailable)
                rule = CATALOG_RULES.get(type(answer), "ard.catalog-unavailable")
                walk.refused.append(Refusal(entry.identifier, rule, str(answer)))
                continue
            walk.catalogs += 1
            walk.documents += 1
            path = parent.path | {entry.url or "", answer.url}  # the URL listed and where it led
            level.append(_Catalog(answer.document, answer.url, parent.depth + 1, path))
        return level

    def _read(self, url: str) -> CatalogDocument | ManifestError:
        try:
            return self._documents.catalog(url)
        except ManifestError as error:
            return error


def _too_deep(entry: CatalogEntry, max_depth: int) -> Refusal:
    return Refusal(
        entry.identifier,
        "ard.catalog-too-deep",
        f"catalogs are read {max_depth} levels deep (the manifest is level 1; AI Catalog ADR-0001)",
    )


def _cut_off(walk: Walk, limit: int) -> Walk:
    walk.complete = False
    walk.refused.append(
        Refusal(
            walk.root.url,
            "ard.too-many-entries",
            f"only the first {limit} entries are read (AGENTDEX_ARD_CRAWL_MAX_ENTRIES)",
        )
    )
    walk.agents = _latest_versions(walk)
    return walk


def _latest_versions(walk: Walk) -> list[AgentEntry]:
    """One entry per identifier (AI Catalog §"Multi-Version Entries"): the same entry listed in
    two catalogs is one; of several versions the latest by `updatedAt`, then by version number,
    then the first listed; two different entries claiming one version refuse the later one."""
    chosen: dict[str, AgentEntry] = {}
    for entry in walk.agents:
        held = chosen.get(entry.identifier)
        if held is None:
            chosen[entry.identifier] = entry
        elif held.sha256 == entry.sha256:
            continue
        elif held.version == entry.version:
            walk.refused.append(
                Refusal(entry.identifier, "ard.duplicate-identifier", f"listed twice with version {entry.version!r}")
            )
        else:
            walk.ignored += 1
            if _recency(entry) > _recency(held):
                chosen[entry.identifier] = entry
    return list(chosen.values())


def _recency(entry: AgentEntry) -> tuple[dt.datetime, tuple[int, ...]]:
    return _updated(entry.updated_at), tuple(int(n) for n in re.findall(r"\d+", entry.version or ""))


def _updated(text: str | None) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(text or "")
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
