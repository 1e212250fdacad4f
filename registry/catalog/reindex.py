"""Rebuilding the search index from the agents' current cards: after the embedding model changes
(`agentdex search reindex`: the agents without a vector of the current model), or after the text
analysis changes (`--all`: every agent's text and vector). Either way, agents stored before the
catalog kept a host term (the card URL's host, the publisher of ARD) are given theirs."""

from __future__ import annotations

from collections.abc import Callable

from registry import jsontext
from registry.catalog.store import CatalogStore
from registry.validation import summarize_card

BATCH = 500  # agents per transaction


class SearchReindex:
    def __init__(self, store: CatalogStore, batch: int = BATCH) -> None:
        self._store = store
        self._batch = batch

    def run(self, every: bool = False, progress: Callable[[int], None] = lambda done: None) -> int:
        """Reindex the agents (all with `every`, else those lacking the current model's vector),
        after giving those without one their host term; how many agents were written (one given
        both counts twice). `progress` is called with the running count after each batch."""
        done = self._add_missing_hosts(progress)
        embedder = self._store.index.embedder
        if not every and not embedder.dimensions:
            return done  # semantic search is off: no vectors to make, and the text is current
        missing = None if every else embedder.model_id
        after = 0
        while cards := self._store.current_cards(after, self._batch, missing):
            self._store.reindex([(pk, summarize_card(jsontext.loads_stored(raw))) for pk, raw in cards])
            done += len(cards)
            after = cards[-1][0]
            progress(done)
        return done

    def _add_missing_hosts(self, progress: Callable[[int], None]) -> int:
        done, after = 0, 0
        while True:
            added, last = self._store.add_missing_hosts(after, self._batch)
            if last is None:
                return done
            done, after = done + added, last
            if added:
                progress(done)
