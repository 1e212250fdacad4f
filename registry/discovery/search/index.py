"""The registry's own agents as its ARD API shows them: ranked or listed pages of ARD entries, and
facet counts, all from the catalog's searches (`CatalogSearch`).

A page's place is a `LocalPlace`: the catalog's cursor, and how far into the chunk of agents read
from it the page ended. A filter the catalog cannot apply (identifiers, creation time, names) is
checked on each agent read, so a page then reads chunks until it is full, at most `MAX_SCANNED`
agents a request; a short page with a `pageToken` means "more may follow".
"""

from __future__ import annotations

import dataclasses
from typing import Any

from registry import jsontext
from registry.catalog import AgentQuery, CatalogSearch, Facet
from registry.discovery.entries import A2A_CARD, agent_entry
from registry.discovery.search.request import HEALTH_STATES, KINDS, InvalidArgument, Selection, host_publisher
from registry.errors import InvalidRequest

SCAN_CHUNK = 250  # agents read at a time when rows are checked one by one
MAX_CHUNK = 1_000
MAX_SCANNED = 2_000  # agents a request reads at most for such a filter
LISTED_SCORE = 100  # an empty text matches every agent the filter selects, fully
FACET_KINDS = KINDS  # the facet fields (but type) are the filter keys, counted by the catalog's term kinds


@dataclasses.dataclass(frozen=True)
class LocalPlace:
    """Where a page of the local index starts: the catalog's cursor, and how many agents of the
    chunk read from there are done."""

    cursor: str | None = None
    skip: int = 0
    chunk: int = 0

    def encode(self) -> str:
        return f"{self.skip}.{self.chunk}.{self.cursor or ''}"

    @classmethod
    def decode(cls, text: str | None) -> LocalPlace:
        """Raises InvalidArgument for a place this registry did not write."""
        if not text:
            return cls()
        try:
            skip, chunk, cursor = text.split(".", 2)
            place = cls(cursor or None, int(skip), int(chunk))
        except ValueError:
            raise InvalidArgument("pageToken is not one this registry issued; start again without it") from None
        if not 0 <= place.skip <= place.chunk <= MAX_CHUNK:
            raise InvalidArgument("pageToken is not one this registry issued; start again without it")
        return place


@dataclasses.dataclass(frozen=True)
class LocalPage:
    entries: list[dict[str, Any]]
    next_place: str | None


class AgentIndex:
    """`public_url`: where this registry's cards are served; `source`: its ARD base URL, which
    search results name as the registry that indexed them."""

    def __init__(self, search: CatalogSearch, public_url: str, source: str, *, semantic: bool = True) -> None:
        self._search = search
        self._public_url = public_url
        self._source = source
        # Without the embedding model, the lexical score alone is the relevance (the fused score
        # would give it only its lexical share, 30 at most).
        self._ranking = "fused" if semantic else "lexical"

    def ranked(self, text: str, selection: Selection, place: str | None, limit: int) -> LocalPage:
        """Agents that `text` finds, best first (the ranked search breaks ties by health, then
        signature state), each with its `score` 0–100."""
        found, after = self._walk(selection, LocalPlace.decode(place), limit, text)
        results = [self._result(row, _score(relevance)) for row, relevance in found]
        return LocalPage(results, after.encode() if after else None)

    def listed(self, selection: Selection, place: str | None, limit: int, *, scored: bool) -> LocalPage:
        """Agents the filter selects, in registration order: the one order whose pages stay
        exact while agents change health (a listing by health would lose or repeat the agents
        that change state between two pages). `scored`: as search results, each scored 100."""
        found, after = self._walk(selection, LocalPlace.decode(place), limit)
        entries = [self._result(row, LISTED_SCORE) if scored else self._entry(row) for row, _ in found]
        return LocalPage(entries, after.encode() if after else None)

    def _walk(
        self, selection: Selection, start: LocalPlace, limit: int, text: str | None = None
    ) -> tuple[list[tuple[Any, Any]], LocalPlace | None]:
        """Up to `limit` (row, relevance) from `start`, and the place after them (None at the end)."""
        if selection.nothing:
            return [], None
        chunk = start.chunk or (max(limit, SCAN_CHUNK) if selection.checks_rows else limit)
        cursor, skip, found, scanned = start.cursor, start.skip, [], 0
        ranking = self._ranking if text is not None else "fused"
        while True:
            page = self._catalog_page(selection.agent_query(text=text, ranking=ranking, cursor=cursor, limit=chunk))
            rows = page.agents
            for index in range(skip, len(rows)):
                row = rows[index]
                scanned += 1
                if not selection.checks_rows or selection.admits(row.card_url, _name(row, selection), row.created_at):
                    found.append((row, (page.relevance or {}).get(row.pk)))
                if len(found) == limit and index + 1 < len(rows):
                    return found, LocalPlace(cursor, index + 1, chunk)
            if page.next_cursor is None:
                return found, None
            cursor, skip = page.next_cursor, 0
            if len(found) == limit or scanned >= MAX_SCANNED:
                return found, LocalPlace(cursor, 0, chunk)

    def _catalog_page(self, query: AgentQuery) -> Any:
        try:
            return self._search.search(query)
        except InvalidRequest as error:  # a catalog cursor out of a forged token, or a bound of the catalog
            raise InvalidArgument(error.message) from None

    def _catalog_facets(self, query: AgentQuery, kinds: list[str], limit: int, min_count: int) -> dict[str, Facet]:
        try:
            return self._search.facets(query, kinds, limit, min_count)
        except InvalidRequest as error:  # a bound of the catalog (more any-of groups than it takes)
            raise InvalidArgument(error.message) from None

    def facets(self, text: str | None, selection: Selection, fields: list[tuple[str, int, int]]) -> dict[str, Any]:
        """`fields`: (field, limit, minCount). ARD v0.91 §5.3.3: counts over the whole matched set."""
        if selection.identifiers is not None:
            raise InvalidArgument("explore does not filter by identifier (it names single agents: search for them)")
        out: dict[str, Any] = {}
        groups: dict[tuple[int, int], list[str]] = {}
        for field, limit, min_count in fields:
            groups.setdefault((limit, min_count), []).append(field)
        for (limit, min_count), names in groups.items():
            kinds = [FACET_KINDS[name] for name in names if name in FACET_KINDS]
            if "type" in names:
                kinds.append("health")  # every agent has one health state: their sum is the total
            kinds = list(dict.fromkeys(kinds))
            counted = (
                {}
                if selection.nothing
                else self._catalog_facets(
                    selection.agent_query(text=text, ranking=self._ranking), kinds, limit, min_count
                )
            )
            for name in names:
                out[name] = _facet_json(name, counted, min_count)
        return out

    def total(self, selection: Selection) -> int | None:
        """How many agents the filter selects; None when rows are checked one by one (not counted)."""
        if selection.nothing:
            return 0
        if selection.checks_rows:
            return None
        return _agents_in(self._catalog_facets(selection.agent_query(), ["health"], len(HEALTH_STATES), 1)["health"])

    def _entry(self, row: Any) -> dict[str, Any]:
        return agent_entry(row, self._public_url)

    def _result(self, row: Any, score: int) -> dict[str, Any]:
        """A search result: the entry as a projection (ARD v0.91 §5.3.2: representativeQueries serve
        indexing and are normally omitted), its score and the registry that indexed it."""
        entry = self._entry(row)
        del entry["representativeQueries"]
        return {**entry, "score": score, "source": self._source}


def _facet_json(field: str, counted: dict[str, Any], min_count: int) -> dict[str, Any]:
    if field == "type":
        total = _agents_in(counted["health"]) if "health" in counted else 0
        return {"buckets": [{"value": A2A_CARD, "count": total}] if total >= max(min_count, 1) else []}
    facet = counted.get(FACET_KINDS[field])
    if facet is None:
        return {"buckets": []}
    counts: dict[str, int] = {}
    for value, count in facet.buckets:
        shown = host_publisher(value) if field == "publisher" else value  # two hosts may be one publisher
        counts[shown] = counts.get(shown, 0) + count
    buckets = sorted(counts.items(), key=lambda bucket: -bucket[1])
    body: dict[str, Any] = {"buckets": [{"value": value, "count": count} for value, count in buckets]}
    if facet.other_count:
        body["otherCount"] = facet.other_count
    return body


def _agents_in(health: Facet) -> int:
    """Every agent counted: each has one health state."""
    return sum(count for _, count in health.buckets) + health.other_count


def _name(row: Any, selection: Selection) -> str:
    """The agent's name, read from its profile only for a filter on names."""
    if selection.name_equals is None and selection.name_contains is None:
        return ""
    return str(jsontext.loads_stored(row.profile).get("name") or "")


def _score(relevance: Any) -> int:
    """ARD's integer relevance 0–100 from the ranked search's score in [0, 1]."""
    return max(0, min(100, round(relevance.score * 100))) if relevance is not None else 0
