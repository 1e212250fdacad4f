"""Bulk registration: many uploaded cards at once (`POST /v1/agents/import`) and the cards an ARD
manifest lists. Each item succeeds or fails on its own; the batch is written in one transaction
with one audit entry. A part of `CatalogService` (a mixin: its face is the service's)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from registry.auth import Actor
from registry.catalog.card_urls import canonical_card_url
from registry.catalog.errors import InvalidCard
from registry.catalog.fetcher import FetchedCard
from registry.catalog.store import CatalogStore, NewAgent
from registry.errors import Conflict, Forbidden, InvalidRequest, PayloadTooLarge
from registry.trust import CatalogTrust, KeyScope, SignatureRequired

if TYPE_CHECKING:
    from registry.catalog.records import CardRecord

IMPORT_ITEM_FIELDS = frozenset({"card", "cardUrl", "jwksUrl"})
# What stops one item and not the others: a bad item, an invalid or unsigned card, a refusal.
ITEM_ERRORS = (InvalidRequest, InvalidCard, PayloadTooLarge, SignatureRequired, Forbidden)


@dataclasses.dataclass(frozen=True)
class ImportOutcome:
    """One line of a bulk import: the new agent id, or the error that stopped it."""

    index: int
    agent_id: str | None = None
    error: dict[str, Any] | None = None


class BulkImports:
    _store: CatalogStore
    _trust: CatalogTrust

    if TYPE_CHECKING:  # the service's own pieces, which a bulk registration shares

        def _record(
            self,
            card: object,
            raw: bytes | None,
            card_url: str,
            *,
            source: str,
            scope: KeyScope | None,
            fetched: FetchedCard | None = None,
        ) -> CardRecord: ...

        def _new_agent(self, actor: Actor, record: CardRecord, scope: KeyScope | None) -> NewAgent: ...

        def _audit(
            self, actor: Actor | None, action: str, agent_id: str | None, detail: dict[str, Any]
        ) -> dict[str, Any]: ...

    def import_cards(self, actor: Actor, items: list[Any]) -> list[ImportOutcome]:
        """Register many uploaded cards at once; each item succeeds or fails on its own."""
        outcomes: list[ImportOutcome] = []
        batch: list[tuple[int, NewAgent]] = []
        shared_scope = self._trust.new_scope(actor, None)
        for index, item in enumerate(items):
            try:
                scope = self._import_scope(actor, item, shared_scope)
                record = self._record(
                    item["card"], None, canonical_card_url(item.get("cardUrl", "")), source="pushed", scope=scope
                )
                batch.append((index, self._new_agent(actor, record, scope)))
            except ITEM_ERRORS as error:
                outcomes.append(ImportOutcome(index, error=_error_dict(error)))
        outcomes.extend(self._insert_batch(actor, batch))
        return sorted(outcomes, key=lambda o: o.index)

    def import_listed(self, actor: Actor, cards: list[tuple[str, FetchedCard, str]]) -> list[ImportOutcome]:
        """An ARD manifest's cards as `import_cards`: (card URL, as fetched, "crawled" or inline "pushed")."""
        outcomes, batch, scope = [], [], self._trust.new_scope(actor, None)
        for index, (url, got, source) in enumerate(cards):
            try:
                record = self._record(got.card, got.body, url, source=source, scope=scope, fetched=got)
                batch.append((index, self._new_agent(actor, record, scope)))
            except ITEM_ERRORS as error:
                outcomes.append(ImportOutcome(index, error=_error_dict(error)))
        return sorted([*outcomes, *self._insert_batch(actor, batch)], key=lambda o: o.index)

    def _import_scope(self, actor: Actor, item: Any, shared: KeyScope | None) -> KeyScope | None:
        """The item's own scope when it names the agent's JWKS, else the one shared by the import.
        Raises InvalidRequest for an item that is not {"card", "cardUrl", "jwksUrl"?}."""
        if not isinstance(item, dict) or not isinstance(item.get("card"), dict):
            raise InvalidRequest('each item needs {"card": {...}, "cardUrl": "..."}')
        unknown = sorted(set(item) - IMPORT_ITEM_FIELDS)
        if unknown:
            raise InvalidRequest(f"unknown fields {unknown}; an item has {sorted(IMPORT_ITEM_FIELDS)}")
        jwks_url = item.get("jwksUrl")
        if jwks_url is None:
            return shared
        if not isinstance(jwks_url, str):
            raise InvalidRequest("jwksUrl must be a string (the agent's JWKS URL)")
        return self._trust.new_scope(actor, jwks_url)

    def _insert_batch(self, actor: Actor, batch: list[tuple[int, NewAgent]]) -> list[ImportOutcome]:
        """Insert the batch in one transaction, with one audit entry for the import."""
        known = self._store.known_urls([new.record.card_url for _, new in batch])
        outcomes = [
            ImportOutcome(i, error=_conflict(new.record.card_url, known[new.record.card_url]))
            for i, new in batch
            if new.record.card_url in known
        ]
        fresh = [(i, new) for i, new in batch if new.record.card_url not in known]
        if not fresh:
            return outcomes
        fresh[0][1].audit = self._audit(actor, "agent.import", None, {"count": len(fresh)})
        for (i, new), pk in zip(fresh, self._store.insert_new([new for _, new in fresh])):
            if pk is not None:
                outcomes.append(ImportOutcome(i, agent_id=new.columns["id"]))
                continue
            url = new.record.card_url
            existing = self._store.known_urls([url]).get(url)
            outcomes.append(
                ImportOutcome(
                    i,
                    error=_conflict(url, existing)
                    if existing
                    else _error_dict(Conflict(f"{url} appears more than once in this import")),
                )
            )
        return outcomes


def url_taken(url: str, agent_id: str) -> Conflict:
    """The refusal of a card URL registered already, as agent `agent_id`."""
    return Conflict(f"{url} is already registered as agent {agent_id}", {"agentId": agent_id})


def _conflict(url: str, agent_id: str) -> dict[str, Any]:
    return _error_dict(url_taken(url, agent_id))


def _error_dict(error: Exception) -> dict[str, Any]:
    code = getattr(error, "code", "error")
    return {"code": code, "message": str(error), "details": getattr(error, "details", {})}
