"""The manifest crawl, wired: registering domains (the `POST /v1/agents` path), re-crawling them
(the `manifest-recrawl` job) and their listings (provenance), built from the settings."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from sqlalchemy import Engine

from registry.catalog import CardFetcher, CatalogService
from registry.db.types import utcnow
from registry.discovery.crawl.apply import ManifestCrawl
from registry.discovery.crawl.domains import DomainRegistrar
from registry.discovery.crawl.fetch import DocumentFetcher
from registry.discovery.crawl.job import ManifestRecrawl
from registry.discovery.crawl.listed_cards import ListedCards
from registry.discovery.crawl.listings import ListingStore
from registry.discovery.crawl.locate import ManifestLocator
from registry.discovery.crawl.walk import ManifestWalker
from registry.jobs import CrawlPolicy
from registry.outbound import SafeHttpClient
from registry.settings import Settings


@dataclasses.dataclass(frozen=True)
class ManifestCrawling:
    domains: DomainRegistrar
    recrawl: ManifestRecrawl
    listings: ListingStore


def manifest_crawling(
    settings: Settings,
    engine: Engine,
    http: SafeHttpClient,
    catalog: CatalogService,
    *,
    clock: Callable[[], dt.datetime] = utcnow,
) -> ManifestCrawling:
    """`catalog` registers and changes the agents (its own clock dates them); `clock` is the crawl's."""
    documents = DocumentFetcher(http)
    locator = ManifestLocator(documents)
    # A crawl waits a quarter of a lease at most for its catalogs, and as long for its cards: the
    # domain's lease outlives the crawl, so no other worker takes it meanwhile.
    time_limit = settings.worker.lease_seconds / 4
    ard = settings.ard
    walker = ManifestWalker(
        documents, max_depth=ard.crawl_depth, max_entries=ard.crawl_max_entries, time_limit=time_limit
    )
    listings = ListingStore(engine)
    fetcher = CardFetcher(http, max_card_bytes=settings.max_card_bytes, clock=clock)
    cards = ListedCards(catalog, fetcher, time_limit=time_limit, clock=clock)
    crawl = ManifestCrawl(catalog, cards, listings, clock=clock)
    worker = settings.worker
    schedule = CrawlPolicy(worker.crawl_interval, worker.crawl_min_interval, worker.crawl_max_interval)
    recrawl = ManifestRecrawl(
        engine, documents, locator, walker, crawl, schedule, lease_seconds=worker.lease_seconds, clock=clock
    )
    domains = DomainRegistrar(catalog, documents, locator, walker, crawl, listings, schedule, clock=clock)
    return ManifestCrawling(domains, recrawl, listings)
