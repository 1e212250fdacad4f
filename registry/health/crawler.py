"""Re-crawling registered agents on their own schedule (a `LeasedWork` for `registry.jobs`).

Each crawled agent is re-fetched when `next_crawl_at` passes, conditionally (`If-None-Match` /
`If-Modified-Since`), then again after its own `Cache-Control: max-age` within the operator's
bounds (else the default interval), jittered; failed fetches back off exponentially. A changed
valid card becomes the current version, an invalid one a non-current version. Pushed cards are
not re-crawled but still claimed, and put off by the longest interval, so that the due range of
the `next_crawl_at` index holds only work.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, select, update

from registry.catalog import (
    Agent,
    AgentCard,
    CardFetcher,
    CardFetchError,
    CardRecord,
    CatalogService,
    FetchedCard,
    NotModified,
)
from registry.db.types import utcnow
from registry.errors import RegistryError
from registry.jobs import CrawlPolicy, LeaseColumns
from registry.metrics import NULL_METRICS, Metrics
from registry.trust import CardTrust, refresh_current_trust

AGENTS = Agent.__table__
CRAWL_LEASE = LeaseColumns(
    AGENTS, AGENTS.c.pk, AGENTS.c.next_crawl_at, AGENTS.c.crawl_lease_owner, AGENTS.c.crawl_lease_until
)
_CLAIMED = (Agent.card_url, Agent.source, Agent.crawl_etag, Agent.crawl_last_modified, Agent.crawl_failures)
_SCHEDULE = update(Agent).where(Agent.pk == bindparam("b_pk"))  # one executemany; SET: the columns each row names


@dataclasses.dataclass(frozen=True)
class DueCrawl:
    pk: int
    card_url: str
    etag: str | None
    last_modified: str | None
    failures: int
    pushed: bool = False


@dataclasses.dataclass(frozen=True)
class CrawlOutcome:
    """`answer` when the agent answered (`record`: the card, valid or not; on 304, `reassessed`:
    the current card's signatures checked again, (version, trust)); `error` when the fetch failed."""

    item: DueCrawl
    answer: FetchedCard | NotModified | None = None
    record: CardRecord | None = None
    reassessed: tuple[int, CardTrust] | None = None
    error: str | None = None


class CrawlService:
    def __init__(
        self,
        engine: Engine,
        fetcher: CardFetcher,
        catalog: CatalogService,
        policy: CrawlPolicy,
        *,
        lease_seconds: float = 300.0,
        clock: Callable[[], dt.datetime] = utcnow,
        rng: random.Random | None = None,
        metrics: Metrics = NULL_METRICS,
    ) -> None:
        self._engine = engine
        self._fetcher = fetcher
        self._metrics = metrics
        self._catalog = catalog
        self._policy = policy
        self._lease_seconds = lease_seconds
        self._clock = clock
        self._rng = rng or random.Random()

    def claim(self, owner: str, limit: int) -> list[DueCrawl]:
        with self._engine.begin() as conn:
            rows = CRAWL_LEASE.claim(
                conn, owner=owner, now=self._clock(), seconds=self._lease_seconds, limit=limit, returning=_CLAIMED
            )
            unknown = [
                row.pk for row in rows if row.source == "crawled" and not (row.crawl_etag or row.crawl_last_modified)
            ]
            stored = _current_validators(conn, unknown)
        due = []
        for row in rows:
            etag, last_modified = stored.get(row.pk, (row.crawl_etag, row.crawl_last_modified))
            due.append(DueCrawl(row.pk, row.card_url, etag, last_modified, row.crawl_failures, row.source != "crawled"))
        return due

    def perform(self, item: DueCrawl) -> CrawlOutcome:
        """Fetch (conditionally) and validate; never raises for what the agent does."""
        if item.pushed:
            return CrawlOutcome(item)
        started = time.perf_counter()
        outcome = self._fetch(item)
        self._metrics.crawl(_crawl_outcome(outcome), time.perf_counter() - started)
        if outcome.record is not None:
            report = outcome.record.report
            self._metrics.validation(report.valid, report.errors[0].rule if report.errors else None)
        return outcome

    def _fetch(self, item: DueCrawl) -> CrawlOutcome:
        try:
            answer = self._fetcher.fetch(item.card_url, etag=item.etag, last_modified=item.last_modified)
            if isinstance(answer, NotModified):  # the same card, but its keys may have changed
                return CrawlOutcome(item, answer, reassessed=self._catalog.reassess_current(item.pk))
            return CrawlOutcome(item, answer, record=self._catalog.crawled_record(answer, item.card_url))
        except (CardFetchError, RegistryError) as error:  # outbound failures are RegistryErrors too
            return CrawlOutcome(item, error=f"{type(error).__name__}: {error}"[:500])

    def record(self, owner: str, outcomes: Sequence[CrawlOutcome]) -> int:
        now = self._clock()
        with self._engine.begin() as conn:
            held = CRAWL_LEASE.hold(
                conn, [o.item.pk for o in outcomes], owner=owner, now=now, seconds=self._lease_seconds
            )
            kept = [o for o in outcomes if o.item.pk in held]
            for outcome in kept:
                if outcome.record is not None:
                    self._catalog.store_crawled(conn, outcome.item.pk, outcome.record)
                elif outcome.reassessed is not None:
                    version, trust = outcome.reassessed
                    refresh_current_trust(conn, outcome.item.pk, trust, version)
            if kept:
                conn.execute(_SCHEDULE, [self._schedule(o, now) for o in kept])
        return len(kept)

    def _schedule(self, outcome: CrawlOutcome, now: dt.datetime) -> dict[str, Any]:
        item, answer = outcome.item, outcome.answer
        if item.pushed:  # not ours to fetch; look again in a day in case it becomes a crawled card
            failures, delay, etag, last_modified = 0, self._policy.max_interval, item.etag, item.last_modified
        elif answer is None:  # the fetch failed: keep the validators, back off
            failures, delay = item.failures + 1, self._policy.backoff(item.failures + 1)
            etag, last_modified = item.etag, item.last_modified
        else:
            failures, delay = 0, self._policy.delay(answer.max_age)
            etag, last_modified = answer.etag, answer.last_modified
        return {
            "b_pk": item.pk,
            "next_crawl_at": self._policy.next_at(now, delay, self._rng),
            "crawled_at": None if item.pushed else now,
            "crawl_failures": failures,
            "crawl_error": outcome.error,
            "crawl_etag": etag[:500] if etag else None,
            "crawl_last_modified": last_modified[:100] if last_modified else None,
            "crawl_lease_owner": None,
            "crawl_lease_until": None,
        }


def _current_validators(conn: Connection, pks: list[int]) -> dict[int, tuple[str | None, str | None]]:
    """Validators stored with the current card, for agents crawled before (or at registration)."""
    if not pks:
        return {}
    current = select(AgentCard.agent_pk, AgentCard.etag, AgentCard.last_modified).where(AgentCard.is_current.is_(True))
    return {
        row.agent_pk: (row.etag, row.last_modified) for row in conn.execute(current.where(AgentCard.agent_pk.in_(pks)))
    }


def _crawl_outcome(outcome: CrawlOutcome) -> str:
    if outcome.error is not None:
        return "failed"
    if outcome.record is None:
        return "not_modified"
    return "fetched" if outcome.record.report.valid else "invalid"
