"""Registering a domain (`POST /v1/agents {"url": "https://example.com"}`, `agentdex register
https://example.com`): its own Agent Card as before, and every A2A agent its ARD manifest lists.

A URL with a path (a card URL, an agent's endpoint) registers one agent exactly as before. For a
domain root the manifest is looked for (ARD v0.91 §5.1) while the domain's own card is registered
as before. Without a manifest that registration is the answer, errors included. With one, a
missing, invalid or already registered domain card is reported, not fatal; the manifest is crawled
now, and the domain is re-crawled on schedule from then on by the principal who registered it
first (its agents are theirs: someone else registering the domain gets 409). The URL of a
well-known manifest (`/.well-known/ard.json`) registers its domain the same way.

The answer (`DomainRegistration`): the agent of the domain's card when it was registered now, the
crawl's report, and `created` (201) when anything was registered or the domain is new to the
registry, else 200.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from registry.auth import Actor
from registry.catalog import CatalogService, canonical_card_url
from registry.db.types import utcnow
from registry.discovery.crawl.apply import ManifestCrawl
from registry.discovery.crawl.fetch import DocumentFetcher, ManifestError
from registry.discovery.crawl.job import WRITE_SCOPES, clipped
from registry.discovery.crawl.listings import ListingStore, SourceState
from registry.discovery.crawl.locate import WELL_KNOWN, Located, ManifestLocator
from registry.discovery.crawl.report import CrawlReport
from registry.discovery.crawl.walk import ManifestWalker
from registry.errors import Conflict, RegistryError
from registry.jobs import CrawlPolicy

WELL_KNOWN_PATHS = {path: via for path, via in WELL_KNOWN}
# The manifest found, and the domain's own agent registered now or the error that stopped it.
Found = tuple[Located, Any | None, RegistryError | None]


@dataclasses.dataclass(frozen=True)
class DomainRegistration:
    """`agent`: the catalog's snapshot of the agent registered now (the domain's own card), if
    any; `manifest`: the crawl's report when the domain has a manifest; `domain_card`: what became
    of the domain's own card when no agent was registered from it."""

    agent: Any | None
    manifest: CrawlReport | None = None
    domain_card: dict[str, Any] | None = None
    created: bool = True

    def manifest_json(self) -> dict[str, Any]:
        """What the API adds to the agent (or answers instead of it)."""
        if self.manifest is None:
            return {}
        extra: dict[str, Any] = {"manifest": self.manifest.to_json()}
        if self.domain_card is not None:
            extra["domainCard"] = self.domain_card
        return extra


class DomainRegistrar:
    def __init__(
        self,
        catalog: CatalogService,
        documents: DocumentFetcher,
        locator: ManifestLocator,
        walker: ManifestWalker,
        crawl: ManifestCrawl,
        listings: ListingStore,
        schedule: CrawlPolicy,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        rng: random.Random | None = None,
    ) -> None:
        self._catalog = catalog
        self._documents = documents
        self._locator = locator
        self._walker = walker
        self._crawl = crawl
        self._listings = listings
        self._schedule = schedule
        self._clock = clock
        self._rng = rng or random.Random()

    def register(self, actor: Actor, url: str, jwks_url: str | None = None) -> DomainRegistration:
        """Register the agent at `url`, and for a domain root the agents its manifest lists.

        Raises what `CatalogService.register_from_url` raises when there is no manifest; Conflict
        when another principal registered the domain's manifest already.
        """
        parts = urlsplit(canonical_card_url(url))  # InvalidUrl before anything is fetched
        domain = f"{parts.scheme}://{parts.netloc}"
        if parts.query or (parts.path != "/" and parts.path not in WELL_KNOWN_PATHS):
            return DomainRegistration(self._catalog.register_from_url(actor, url, jwks_url))
        self._catalog.admit_manifest(actor, domain)  # the registration gate: e.g. only the domain's owner
        source = self._listings.source(domain)
        owner = _crawling_as(actor, domain, source)
        if parts.path == "/":
            found = self._domain_root(actor, url, domain, jwks_url)
        else:
            found = self._manifest_url(actor, url, domain, WELL_KNOWN_PATHS[parts.path], jwks_url)
        if isinstance(found, DomainRegistration):
            return found
        located, agent, refused = found
        report = self._crawl_now(domain, located, owner)
        created = agent is not None or source is None or bool(report.registered)
        return DomainRegistration(agent, report, _card_outcome(refused), created)

    def _domain_root(self, actor: Actor, url: str, domain: str, jwks_url: str | None) -> Found | DomainRegistration:
        """The manifest is looked for while the domain's own card is registered: for a slow domain
        the registration waits for the longer of the two, not for both. Without a manifest, the
        card's registration is the answer, its error included."""
        with ThreadPoolExecutor(1) as pool:
            looking = pool.submit(self._locator.find, domain)
            agent, refused = self._domain_card(actor, url, jwks_url)
            located = looking.result().located
        if located is not None:
            return located, agent, refused
        if refused is not None:
            raise refused
        return DomainRegistration(agent)

    def _manifest_url(
        self, actor: Actor, url: str, domain: str, via: str, jwks_url: str | None
    ) -> Found | DomainRegistration:
        """The manifest's own URL: without a manifest there, it is registered as a card URL, as before."""
        located = self._located_at(url, via)
        if located is None:
            return DomainRegistration(self._catalog.register_from_url(actor, url, jwks_url))
        agent, refused = self._domain_card(actor, domain, jwks_url)
        return located, agent, refused

    def _located_at(self, url: str, via: str) -> Located | None:
        try:
            return Located(self._documents.catalog(url), via)
        except ManifestError:
            return None

    def _domain_card(self, actor: Actor, url: str, jwks_url: str | None) -> tuple[Any | None, RegistryError | None]:
        """The domain's own card registered as before, or why it was not."""
        try:
            return self._catalog.register_from_url(actor, url, jwks_url), None
        except RegistryError as error:
            return None, error

    def _crawl_now(self, domain: str, located: Located, owner: Actor) -> CrawlReport:
        """Crawl the manifest now, and follow it from now on."""
        now = self._clock()
        root = located.document
        values = {
            "domain": domain,
            "manifest_url": root.url[:2048],
            "found_via": located.via,
            "owner_id": owner.principal_id,
            "created_at": now,
            "next_crawl_at": self._schedule.next_at(now, self._schedule.delay(root.max_age), self._rng),
            "crawled_at": now,
            "crawl_failures": 0,
            "crawl_error": None,
            "etag": clipped(root.etag, 500),
            "last_modified": clipped(root.last_modified, 100),
            "documents": 1,
        }
        source_pk = self._listings.save_source(values)
        walk = self._walker.walk(root)
        report = self._crawl.apply(source_pk, walk, located.via, owner, revive_deleted=True)
        if walk.documents != 1:
            self._listings.save_source({**values, "documents": walk.documents})
        return report


def _card_outcome(error: RegistryError | None) -> dict[str, Any] | None:
    """What became of the domain's own card when none was registered now (None: it was)."""
    if error is None:
        return None
    known = error.details.get("agentId") if isinstance(error, Conflict) else None
    outcome = {"outcome": "already-registered" if known else "not-registered", "code": error.code}
    return {**outcome, "message": str(error), **({"id": known} if known else {})}


def _crawling_as(actor: Actor, domain: str, source: SourceState | None) -> Actor:
    """Who the crawl acts as: the domain's owner, whose agents it registers and changes (an admin
    may crawl someone else's domain now). Raises Conflict for anyone else."""
    if source is None or source.owner_id in (None, actor.principal_id):
        return actor
    if not actor.is_admin:
        raise Conflict(
            f"the ARD manifest of {domain} is registered by someone else, and re-crawled on schedule; "
            "to register the domain's own agent, give its card URL"
        )
    return Actor(source.owner_id, "", WRITE_SCOPES)
