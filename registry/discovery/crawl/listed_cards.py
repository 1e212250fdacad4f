"""Turning a manifest's agent entries into catalog agents: new ones registered, changed ones given a
new card version, through the catalog like any registration (validation, signatures, endorsement).

Speed: cards by `url` are fetched concurrently (the outbound client is thread-safe and pooled) and
registered in batches through the catalog's bulk path as they arrive, so that writing one batch
overlaps fetching the next; no fetch happens inside a transaction.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import TypeVar
from urllib.parse import urlsplit

from registry import jsontext
from registry.auth import Actor
from registry.catalog import CardFetcher, CardFetchError, CatalogService, FetchedCard, NotModified, canonical_card_url
from registry.db.types import utcnow
from registry.discovery.crawl.reader import AgentEntry, Refusal
from registry.discovery.crawl.report import CrawlReport, named
from registry.errors import InvalidRequest, RegistryError
from registry.outbound import OutboundRefused

FETCHERS = 16  # cards fetched at once
BATCH = 250  # cards registered per transaction
TIME_LIMIT = 75.0  # seconds: a quarter of the worker's default lease
Answer = TypeVar("Answer")


@dataclasses.dataclass(frozen=True)
class Placed:
    """An entry that became (or already was) an agent: what its listing row records."""

    entry: AgentEntry
    agent_id: str | None  # None: its agent was deleted by its owner
    owned: bool
    sha256: str  # the entry's digest as applied (a refused update keeps the previous one)


@dataclasses.dataclass(frozen=True)
class NewCard:
    """An entry to register: its card URL (the catalog's canonical form) and the card."""

    entry: AgentEntry
    card_url: str
    card: FetchedCard


class ListedCards:
    def __init__(
        self,
        catalog: CatalogService,
        fetcher: CardFetcher,
        *,
        fetchers: int = FETCHERS,
        batch: int = BATCH,
        time_limit: float = TIME_LIMIT,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        """`time_limit`: seconds a crawl waits for the cards it fetches, all together."""
        self._catalog = catalog
        self._fetcher = fetcher
        self._fetchers = fetchers
        self._batch = batch
        self._time_limit = time_limit
        self._clock = clock

    def register(
        self,
        actor: Actor,
        entries: list[tuple[AgentEntry, str]],
        report: CrawlReport,
        placed: Callable[[list[Placed]], None],
    ) -> None:
        """Register each (entry, card URL): inline cards as they are, the others once fetched.
        Each batch registered is handed to `placed` at once (its listings are written then)."""
        batch: list[NewCard] = []
        for entry, card_url in entries:
            if entry.data is not None:
                batch = self._add(actor, batch, NewCard(entry, card_url, self._inline(entry)), report, placed)
        fetched = [entry for entry, _ in entries if entry.url is not None]
        with ThreadPoolExecutor(max(1, min(self._fetchers, len(fetched)))) as pool:
            futures = {pool.submit(self.fetch, entry.url or ""): entry for entry in fetched}
            for entry, answer in self._in_time(futures, report):
                found = _where_found(answer)
                if isinstance(found, Refusal):
                    report.refuse(entry.identifier, found.rule, found.message)
                    continue
                assert isinstance(answer, FetchedCard)
                batch = self._add(actor, batch, NewCard(entry, found, answer), report, placed)
        if batch:
            self._write(actor, batch, report, placed)

    def update(self, actor: Actor, changed: list[tuple[AgentEntry, str]], report: CrawlReport) -> list[Placed]:
        """New card versions for changed entries of agents the crawl owns: (entry, agent id).
        Inline cards are replaced; cards by `url` are fetched again (concurrently)."""
        done: list[Placed] = []
        with ThreadPoolExecutor(max(1, min(self._fetchers, len(changed)))) as pool:
            futures: dict[Future[bool | RegistryError], AgentEntry] = {}
            for entry, agent_id in changed:
                futures[pool.submit(self._new_version, actor, agent_id, entry)] = entry
            agents = {entry.identifier: agent_id for entry, agent_id in changed}
            for entry, changed_card in self._in_time(futures, report):
                agent_id = agents[entry.identifier]
                if isinstance(changed_card, RegistryError):  # the agent keeps its card; tried again next time
                    error = {"code": changed_card.code, "message": str(changed_card), "details": changed_card.details}
                    report.refuse_error(entry.identifier, error)
                    continue
                if changed_card:
                    report.updated.append(named(entry.identifier, agent_id))
                else:
                    report.unchanged += 1
                done.append(Placed(entry, agent_id, True, entry.sha256))
        return done

    def _new_version(self, actor: Actor, agent_id: str, entry: AgentEntry) -> bool | RegistryError:
        """An inline card replaced, or a card by `url` fetched again: whether the card changed."""
        try:
            if entry.data is not None:
                return self._catalog.replace_card(actor, agent_id, entry.data)
            return self._catalog.refresh(actor, agent_id)
        except RegistryError as error:
            return error

    def _in_time(
        self, futures: dict[Future[Answer], AgentEntry], report: CrawlReport
    ) -> Iterator[tuple[AgentEntry, Answer]]:
        """The answers as they come, within the crawl's time limit (a publisher whose cards answer
        slowly holds one worker for at most that long): the entries not answered by then are
        refused, their fetches cancelled; the next crawl tries them again."""
        pending = set(futures)
        try:
            for future in as_completed(futures, timeout=self._time_limit):
                pending.discard(future)
                yield futures[future], future.result()
        except TimeoutError:
            for future in pending:
                if future.done():
                    yield futures[future], future.result()
                    continue
                future.cancel()
                limit = f"not fetched within the crawl's time limit ({self._time_limit:.0f} s); tried again next crawl"
                report.refuse(futures[future].identifier, "ard.crawl-time-limit", limit)

    def fetch(self, url: str) -> FetchedCard | Refusal:
        """The card at an entry's `url`: the document itself (AI Catalog: `url` is where the
        artifact is), else, for an agent's base URL, the card its well-known path serves."""
        try:
            return self._fetched(self._fetcher.fetch(url))
        except OutboundRefused as error:
            return Refusal("", "ard.card-refused", str(error))
        except CardFetchError as error:
            missing = (error.details or {}).get("reason") in ("CardNotFound", "CardNotJson")
            if not missing or urlsplit(url).path.lower().endswith(".json"):
                return Refusal("", "ard.card-unreachable", str(error))
            try:
                return self._fetcher.discover(url)
            except (CardFetchError, OutboundRefused):
                return Refusal("", "ard.card-unreachable", str(error))

    def _fetched(self, answer: FetchedCard | NotModified) -> FetchedCard:
        assert isinstance(answer, FetchedCard)  # no validators were sent
        return answer

    def _inline(self, entry: AgentEntry) -> FetchedCard:
        """An inline card as if fetched from the catalog that lists it (its provenance)."""
        body = jsontext.dumps(entry.data)
        return FetchedCard(entry.catalog_url, body, entry.data, None, None, None, self._clock())

    def _add(
        self,
        actor: Actor,
        batch: list[NewCard],
        new: NewCard,
        report: CrawlReport,
        placed: Callable[[list[Placed]], None],
    ) -> list[NewCard]:
        batch.append(new)
        if len(batch) < self._batch:
            return batch
        self._write(actor, batch, report, placed)
        return []

    def _write(
        self, actor: Actor, batch: list[NewCard], report: CrawlReport, placed: Callable[[list[Placed]], None]
    ) -> None:
        items = [(new.card_url, new.card, "pushed" if new.entry.data is not None else "crawled") for new in batch]
        done = []
        for new, outcome in zip(batch, self._catalog.import_listed(actor, items)):
            identifier = new.entry.identifier
            if outcome.agent_id is not None:
                report.registered.append(named(identifier, outcome.agent_id))
                done.append(Placed(new.entry, outcome.agent_id, True, new.entry.sha256))
            elif outcome.error and outcome.error.get("code") == "conflict" and outcome.error["details"].get("agentId"):
                agent_id = outcome.error["details"]["agentId"]  # registered meanwhile, or twice in the manifest
                report.linked.append(named(identifier, agent_id))
                done.append(Placed(new.entry, agent_id, False, new.entry.sha256))
            else:
                report.refuse_error(identifier, outcome.error or {})
        placed(done)


def _where_found(answer: FetchedCard | Refusal) -> str | Refusal:
    """The card's URL as the catalog keeps it: where it was found, after redirects."""
    if isinstance(answer, Refusal):
        return answer
    try:
        return canonical_card_url(answer.card_url)
    except InvalidRequest as error:
        return Refusal("", "ard.url-invalid", f"the card was found at an unusable URL: {error}")


def inline_card_url(manifest_url: str, identifier: str) -> str | Refusal:
    """Where an inline card is kept: the manifest's URL + "#" + the entry's identifier (issue 30),
    the manifest in the catalog's canonical form. A fragment is never fetched, so no re-crawl of
    cards reads it; the manifest crawl keeps it current."""
    try:
        url = canonical_card_url(manifest_url) + "#" + identifier
    except InvalidRequest as error:
        return Refusal(identifier, "ard.url-invalid", str(error))
    if len(url) > 2048:  # agents.card_url
        return Refusal(identifier, "ard.url-invalid", "the manifest URL and the identifier are too long together")
    return url
