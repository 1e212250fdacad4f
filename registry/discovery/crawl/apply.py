"""Applying what a domain's manifest lists (a `Walk`) to the catalog, as the domain's owner:
new entries are registered, changed ones updated, entries that disappeared deprecated (never
deleted) and those that come back reactivated; every listing is kept as provenance.

Only agents the crawl registered itself (`owned` listings) are ever updated or deprecated: an agent
someone registered directly is linked to the entries that list it, never changed by a manifest.
Absent entries are taken as removed only after a complete read (every nested catalog answered,
nothing cut off): a catalog that is down for an hour deprecates nothing. A refused entry is still
listed (a typo in an entry does not deprecate its agent). A deprecated agent whose entry comes
back is reactivated when the crawl deprecated it and its status message is still the crawl's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from registry.auth import Actor
from registry.catalog import CatalogService
from registry.db.types import utcnow
from registry.discovery.crawl.listed_cards import ListedCards, Placed, inline_card_url
from registry.discovery.crawl.listings import Held, ListingStore
from registry.discovery.crawl.reader import AgentEntry, Refusal
from registry.discovery.crawl.report import CrawlReport, named
from registry.discovery.crawl.walk import Walk
from registry.errors import RegistryError

log = logging.getLogger(__name__)
DELISTED = "no longer listed"  # the start of every status message the crawl sets


@dataclasses.dataclass
class _Plan:
    """Where each listed entry goes: kept as it is, updated, or registered (with its card URL)."""

    kept: list[Placed] = dataclasses.field(default_factory=list)
    changed: list[tuple[AgentEntry, str]] = dataclasses.field(default_factory=list)
    fresh: list[tuple[AgentEntry, str]] = dataclasses.field(default_factory=list)
    moved: list[Held] = dataclasses.field(default_factory=list)  # owned agents whose entry names another card


class ManifestCrawl:
    def __init__(
        self,
        catalog: CatalogService,
        cards: ListedCards,
        listings: ListingStore,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._catalog = catalog
        self._cards = cards
        self._listings = listings
        self._clock = clock

    def apply(
        self,
        source_pk: int,
        walk: Walk,
        via: str,
        actor: Actor,
        *,
        revive_deleted: bool = False,
        reason: str | None = None,
    ) -> CrawlReport:
        """Make the catalog follow `walk`. `revive_deleted`: register again the entries whose agent
        its owner deleted (an explicit registration does; a scheduled crawl does not). `reason`:
        the status message of agents deprecated now (by default "no longer listed in <manifest>")."""
        now = self._clock()
        report = CrawlReport(walk.root.url, via, walk.listed, refused=list(walk.refused))
        report.ignored, report.catalogs, report.complete = walk.ignored, walk.catalogs, walk.complete
        held = self._listings.held(source_pk)
        plan = self._plan(walk, held, actor, report, revive_deleted)
        write = _RowWriter(self._listings, source_pk, now)
        write(plan.kept)
        self._cards.register(actor, plan.fresh, report, write)
        write(self._cards.update(actor, plan.changed, report))
        self._reactivate(actor, walk, held, report)
        reason = reason or f"{DELISTED} in {walk.root.url}"
        listed_agents = write.agent_pks
        self._deprecate(actor, [h for h in plan.moved if h.agent_pk not in listed_agents], reason, report)
        if walk.complete:
            present = walk.present()
            gone = [h for identifier, h in held.items() if h.listed and identifier not in present]
            retired = self._deprecate(actor, [h for h in gone if h.agent_pk not in listed_agents], reason, report)
            self._listings.delist(source_pk, [h.identifier for h in gone], retired, now)
        report.sort()
        return report

    def _plan(
        self, walk: Walk, held: dict[str, Held], actor: Actor, report: CrawlReport, revive_deleted: bool
    ) -> _Plan:
        plan = _Plan()
        for entry in walk.agents:
            was = held.get(entry.identifier)
            if was is not None and was.agent_id is None and not revive_deleted:
                report.skipped += 1
                plan.kept.append(Placed(entry, None, was.owned, entry.sha256))
            elif was is not None and was.agent_id is not None and was.entry_url == entry.url:
                if was.owned and was.entry_sha256 != entry.sha256:
                    plan.changed.append((entry, was.agent_id))
                else:
                    report.unchanged += 1
                    plan.kept.append(Placed(entry, was.agent_id, was.owned, entry.sha256))
            else:
                if was is not None and was.agent_id is not None and was.owned:
                    plan.moved.append(was)
                card_url = entry.url or inline_card_url(walk.root.url, entry.identifier)
                if isinstance(card_url, Refusal):
                    report.refused.append(card_url)
                else:
                    plan.fresh.append((entry, card_url))
        plan.fresh = self._link_known(plan, actor, report)
        return plan

    def _link_known(self, plan: _Plan, actor: Actor, report: CrawlReport) -> list[tuple[AgentEntry, str]]:
        """Entries whose card is registered already are linked to its agent; the rest are new. An
        inline card's URL (with its fragment) can only have been registered by a manifest crawl."""
        known = self._listings.known_cards([url for _, url in plan.fresh])
        fresh = []
        for entry, url in plan.fresh:
            agent = known.get(url)
            if agent is None:
                fresh.append((entry, url))
                continue
            owned = entry.data is not None and agent.owner_id == actor.principal_id
            report.linked.append(named(entry.identifier, agent.id))
            plan.kept.append(Placed(entry, agent.id, owned, entry.sha256))
        return fresh

    def _reactivate(self, actor: Actor, walk: Walk, held: dict[str, Held], report: CrawlReport) -> None:
        for entry in walk.agents:
            was = held.get(entry.identifier)
            if was is None or not (was.deprecated and was.agent_id and was.status == "deprecated"):
                continue
            if not (was.status_message or "").startswith(DELISTED):  # deprecated since, by a person
                continue
            if self._set_status(actor, was, "active", "", report):
                report.reactivated.append(named(was.identifier, was.agent_id))

    def _deprecate(self, actor: Actor, gone: list[Held], reason: str, report: CrawlReport) -> set[str]:
        """Deprecate the active agents the crawl owns among `gone`; the identifiers deprecated."""
        done = set()
        for was in gone:
            if was.owned and was.agent_id and was.status == "active":
                if self._set_status(actor, was, "deprecated", reason[:1000], report):
                    report.deprecated.append(named(was.identifier, was.agent_id))
                    done.add(was.identifier)
        return done

    def _set_status(self, actor: Actor, was: Held, status: str, message: str, report: CrawlReport) -> bool:
        try:
            self._catalog.update_status(actor, was.agent_id or "", status, message)
        except RegistryError as error:  # e.g. deleted meanwhile: reported, the crawl goes on
            log.info("manifest crawl: cannot set %s to %s: %s", was.agent_id, status, error)
            report.refuse(was.identifier, "ard.status-unchanged", f"could not set the agent {status}: {error}")
            return False
        return True


class _RowWriter:
    """Writes the listing rows of placed entries (each call at once: a batch just registered is
    listed before the next is fetched) and remembers the agents still listed."""

    def __init__(self, listings: ListingStore, source_pk: int, now: dt.datetime) -> None:
        self._listings = listings
        self._source_pk = source_pk
        self._now = now
        self.agent_pks: set[int | None] = set()

    def __call__(self, placed: list[Placed]) -> None:
        pks = self._listings.agent_pks([p.agent_id for p in placed if p.agent_id])
        rows = [self._row(p, pks.get(p.agent_id or "")) for p in placed]
        self.agent_pks.update(row["agent_pk"] for row in rows if row["agent_pk"] is not None)
        self._listings.write(rows)

    def _row(self, placed: Placed, agent_pk: int | None) -> dict[str, Any]:
        entry = placed.entry
        return {
            "source_pk": self._source_pk,
            "identifier": entry.identifier,
            "agent_pk": agent_pk,
            "catalog_url": entry.catalog_url[:2048],
            "entry_url": entry.url,
            "entry_sha256": placed.sha256,
            "owned": placed.owned,
            "listed": True,
            "deprecated": False,
            "first_listed_at": self._now,
            "last_listed_at": self._now,
            "delisted_at": None,
        }
