"""Re-crawling the domains whose manifests the registry follows (a `LeasedWork` for `registry.jobs`),
on the same schedule as cards: the operator's crawl interval, or the manifest's own
`Cache-Control: max-age` within the bounds, jittered; failures back off exponentially.

The manifest is fetched conditionally (`If-None-Match` / `If-Modified-Since`) when it was the only
document of the last read; a 304 then means nothing changed. One that answers 404 is looked for
again at every location of the domain: found elsewhere, it is followed there; found nowhere, every
agent it listed is deprecated. One that does not answer usably changes nothing (back-off).

`perform` registers and updates agents through the catalog (each write its own short transaction,
none around network I/O): that is the crawl's work. `record` writes the schedule, fenced by the
lease. Two crawls of one domain at once (a lease that expired mid-crawl, a registration during a
re-crawl) agree: listings are upserts, card URLs are unique, status changes are transitions.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, bindparam, select, update

from registry.auth import Actor, Principal
from registry.db import writer_lock
from registry.db.types import utcnow
from registry.discovery.crawl.apply import DELISTED, ManifestCrawl
from registry.discovery.crawl.fetch import (
    CatalogDocument,
    DocumentFetcher,
    ManifestAbsent,
)
from registry.discovery.crawl.locate import ManifestLocator
from registry.discovery.crawl.models import ManifestSource
from registry.discovery.crawl.walk import ManifestWalker, Walk
from registry.errors import RegistryError
from registry.jobs import CrawlPolicy, LeaseColumns

SOURCES = ManifestSource.__table__
SOURCE_LEASE = LeaseColumns(
    SOURCES, SOURCES.c.pk, SOURCES.c.next_crawl_at, SOURCES.c.crawl_lease_owner, SOURCES.c.crawl_lease_until
)
_CLAIMED = tuple(
    SOURCES.c[name]
    for name in ("domain", "manifest_url", "found_via", "owner_id", "etag", "last_modified", "documents")
) + (SOURCES.c.crawl_failures,)
_SCHEDULE = update(ManifestSource).where(ManifestSource.pk == bindparam("b_pk"))
WRITE_SCOPES = frozenset({"agents:write"})  # a crawl acts as the domain's owner, on its agents only


@dataclasses.dataclass(frozen=True)
class DueManifest:
    pk: int
    domain: str
    manifest_url: str
    found_via: str
    owner: Actor | None  # None: the principal that registered the domain is gone
    etag: str | None
    last_modified: str | None
    documents: int
    failures: int


@dataclasses.dataclass(frozen=True)
class RecrawlOutcome:
    """`root` when the manifest was fetched anew (an unchanged one, 304, has none); `error` when it
    could not be read, or was found gone."""

    item: DueManifest
    root: CatalogDocument | None = None
    via: str | None = None
    documents: int = 1
    error: str | None = None


class ManifestRecrawl:
    def __init__(
        self,
        engine: Engine,
        documents: DocumentFetcher,
        locator: ManifestLocator,
        walker: ManifestWalker,
        crawl: ManifestCrawl,
        schedule: CrawlPolicy,
        *,
        lease_seconds: float = 300.0,
        clock: Callable[[], dt.datetime] = utcnow,
        rng: random.Random | None = None,
    ) -> None:
        self._engine = engine
        self._documents = documents
        self._locator = locator
        self._walker = walker
        self._crawl = crawl
        self._schedule = schedule
        self._lease_seconds = lease_seconds
        self._clock = clock
        self._rng = rng or random.Random()
        self._writer = writer_lock(engine)

    def claim(self, owner: str, limit: int) -> list[DueManifest]:
        with self._writer.hold(), self._engine.begin() as conn:
            rows = SOURCE_LEASE.claim(
                conn, owner=owner, now=self._clock(), seconds=self._lease_seconds, limit=limit, returning=_CLAIMED
            )
            owners = {row.owner_id for row in rows if row.owner_id is not None}
            principals = conn.execute(select(Principal.id, Principal.name).where(Principal.id.in_(owners)))
            names = {row.id: row.name for row in principals}
        return [
            DueManifest(
                row.pk,
                row.domain,
                row.manifest_url,
                row.found_via,
                Actor(row.owner_id, names[row.owner_id], WRITE_SCOPES) if row.owner_id in names else None,
                row.etag,
                row.last_modified,
                row.documents,
                row.crawl_failures,
            )
            for row in rows
        ]

    def perform(self, item: DueManifest) -> RecrawlOutcome:
        """Read the manifest and make the catalog follow it; never raises for what the domain does."""
        if item.owner is None:
            return RecrawlOutcome(item, error="the principal that registered this domain no longer exists")
        try:
            return self._crawl_manifest(item, item.owner)
        except RegistryError as error:  # a ManifestError, or the catalog refused a write the crawl needed
            return RecrawlOutcome(item, error=f"{type(error).__name__}: {error}"[:500])

    def record(self, owner: str, outcomes: Sequence[RecrawlOutcome]) -> int:
        now = self._clock()
        with self._writer.hold(), self._engine.begin() as conn:
            pks = [outcome.item.pk for outcome in outcomes]
            held = SOURCE_LEASE.hold(conn, pks, owner=owner, now=now, seconds=self._lease_seconds)
            rows = [self._scheduled(outcome, now) for outcome in outcomes if outcome.item.pk in held]
            if rows:
                conn.execute(_SCHEDULE, rows)
        return len(rows)

    def _crawl_manifest(self, item: DueManifest, actor: Actor) -> RecrawlOutcome:
        try:
            if item.documents == 1:
                root = self._documents.changed_catalog(item.manifest_url, item.etag, item.last_modified)
            else:
                root = self._documents.catalog(item.manifest_url)
            via = item.found_via
        except ManifestAbsent:
            search = self._locator.find(item.domain)
            if search.located is None and (search.inconclusive or search.refused):
                return RecrawlOutcome(item, error=f"no manifest answered; tried {', '.join(search.tried)}"[:500])
            if search.located is None:
                return self._gone(item, actor)
            root, via = search.located.document, search.located.via
        if root is None:
            return RecrawlOutcome(item, documents=item.documents)  # 304: the manifest did not change
        walk = self._walker.walk(root)
        self._crawl.apply(item.pk, walk, via, actor)
        return RecrawlOutcome(item, root, via, walk.documents)

    def _gone(self, item: DueManifest, actor: Actor) -> RecrawlOutcome:
        """The domain publishes no manifest any more: nothing is listed."""
        walk = Walk(CatalogDocument(item.manifest_url, {"entries": []}))
        reason = f"{DELISTED}: {item.domain} publishes no ARD manifest any more (it was {item.manifest_url})"
        self._crawl.apply(item.pk, walk, item.found_via, actor, reason=reason)
        return RecrawlOutcome(item, error=f"no manifest found at {item.domain} any more")

    def _scheduled(self, outcome: RecrawlOutcome, now: dt.datetime) -> dict[str, Any]:
        item, root = outcome.item, outcome.root
        failed = outcome.error is not None
        failures = item.failures + 1 if failed else 0
        delay = self._schedule.backoff(failures) if failed else self._schedule.delay(root.max_age if root else None)
        return {
            "b_pk": item.pk,
            "next_crawl_at": self._schedule.next_at(now, delay, self._rng),
            "crawled_at": now,
            "crawl_failures": failures,
            "crawl_error": outcome.error,
            "manifest_url": root.url[:2048] if root else item.manifest_url,
            "found_via": outcome.via or item.found_via,
            "etag": clipped(root.etag, 500) if root else item.etag,
            "last_modified": clipped(root.last_modified, 100) if root else item.last_modified,
            "documents": outcome.documents,
            "crawl_lease_owner": None,
            "crawl_lease_until": None,
        }


def clipped(value: str | None, length: int) -> str | None:
    """A validator as its column holds it (an over-long one no longer matches: a full fetch)."""
    return value[:length] if value else None
