"""Reading the catalog: search with cursor pagination, one agent, its cards, its history, tags."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Row

from registry.catalog.any_of import AnyOf, narrowed
from registry.catalog.drift import card_drift
from registry.catalog.facets import TEXT_MATCHES, Facet, FacetCounter, check_facet_request
from registry.catalog.gate import LISTED, UNLISTED
from registry.catalog.models import AgentCard
from registry.catalog.ranking import Ranked, RankedSearch, Relevance
from registry.catalog.records import MAX_TERM, normalize_mode, normalize_tag
from registry.catalog.reindex import SearchReindex
from registry.catalog.store import CatalogStore
from registry.catalog.store_search import SearchFilters
from registry.cursors import RankKey, decode_cursor, decode_ranked_cursor, encode_cursor, encode_ranked_cursor
from registry.db.types import utcnow
from registry.errors import InvalidRequest, NotFound

CAPABILITIES = ("streaming", "pushNotifications", "extendedAgentCard")
STATUS_FILTERS = ("active", "deprecated", "any")
HEALTH_FILTERS = ("up", "degraded", "down", "unknown")
MAX_SEARCH_TAGS = 32


@dataclasses.dataclass(frozen=True)
class AgentQuery:
    """A catalog search. Every filter narrows the result; tags match all unless `match_any`.

    `any_of`: groups of (kind, values); an agent matches a group when it has at least one of the
    values, and must match every group (and every other filter: a status group narrows `status`,
    so choosing statuses by a group wants `status="any"`). Kinds: tag, host (the card URL's host),
    input, output, cap, proto, sig, health, status (`registry.catalog.any_of`).
    """

    tags: tuple[str, ...] = ()
    match_any: bool = False
    text: str | None = None
    skill: str | None = None
    input_mode: str | None = None
    output_mode: str | None = None
    capabilities: tuple[str, ...] = ()
    protocol_version: str | None = None
    status: str = "active"
    updated_since: dt.datetime | None = None
    health: str | None = None
    include_dead: bool = False
    signature: str | None = None
    ranking: str = "fused"  # with text: fused, lexical or semantic (`registry.retrieval.scoring.RANKINGS`)
    limit: int = 50
    cursor: str | None = None
    any_of: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def required_terms(self) -> list[tuple[str, str]]:
        terms = [] if self.match_any else [("tag", normalize_tag(t)) for t in self.tags]
        if self.skill:
            terms.append(("skill", self.skill))
        if self.input_mode:
            terms.append(("input", normalize_mode(self.input_mode)))
        if self.output_mode:
            terms.append(("output", normalize_mode(self.output_mode)))
        terms.extend(("cap", c) for c in self.capabilities)
        if self.protocol_version:
            terms.append(("proto", self.protocol_version.strip()))
        if self.signature:
            terms.append(("sig", self.signature))
        return list(dict.fromkeys((kind, value[:MAX_TERM]) for kind, value in terms))  # as indexed


@dataclasses.dataclass(frozen=True)
class AgentPage:
    agents: list[Row[Any]]
    next_cursor: str | None
    relevance: dict[int, Relevance] | None = None  # by agent pk, for a ranked search
    suggested_tags: list[str] | None = None  # for a ranked search that found nothing


SUGGESTED_TAGS = 5


class CatalogSearch:
    def __init__(
        self,
        store: CatalogStore,
        ranked: RankedSearch,
        *,
        hide_dead_after: float | None = None,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._store = store
        self._ranked = ranked
        self._hide_dead_after = hide_dead_after
        self._clock = clock
        self._facets = FacetCounter(store)

    def search(self, query: AgentQuery) -> AgentPage:
        """Agents matching every filter: with text, best first (`registry.catalog.ranking`); without,
        in registration order; `limit` at a time."""
        filters = self._filters(query)
        if filters is None:
            return AgentPage([], None, {} if query.text is not None else None)
        if query.text is not None:
            return self._ranked_page(query, filters)
        after = decode_cursor(query.cursor)
        rows = self._store.search(filters, after, query.limit + 1)
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        return AgentPage(rows, encode_cursor(rows[-1].pk) if more else None)

    def facets(self, query: AgentQuery, kinds: Sequence[str], limit: int = 20, min_count: int = 1) -> dict[str, Facet]:
        """For each kind (`AgentQuery.any_of`'s; host values are hostnames), the values that the
        query's matching agents carry, with how many carry each (`Facet`). The matches are those
        of `search` (its default status and hiding of dead agents included; cursor and limit
        ignored); with text, the first TEXT_MATCHES (1,000) agents the ranked search finds.
        Large sets are counted from the catalog's indexes and kept a while (`registry.catalog.facets`).
        Raises InvalidRequest for an unknown kind, a limit outside 1…1,000, a negative min_count,
        or a bad query."""
        check_facet_request(kinds, limit, min_count)
        filters = self._filters(query)
        if filters is None or not kinds:
            return {kind: Facet([], 0) for kind in kinds}
        if query.text is None:
            return self._facets.of(filters, kinds, limit, min_count)
        found = self._ranked.rank(query.text, filters, query.ranking, None, TEXT_MATCHES)
        return self._facets.among([result.pk for result in found], kinds, limit, min_count)

    def search_with_facets(
        self, query: AgentQuery, kinds: Sequence[str], limit: int = 20, min_count: int = 1
    ) -> tuple[AgentPage, dict[str, Facet]]:
        """`search(query)` and `facets(query, kinds, limit, min_count)` at once (the web catalog's
        home page). With text, the query is ranked once for both: the facets count its first
        TEXT_MATCHES results and the page is the `limit` after the cursor among them (a ranked
        search holds no more). Raises what `search` and `facets` raise."""
        if query.text is None:
            return self.search(query), self.facets(query, kinds, limit, min_count)
        check_facet_request(kinds, limit, min_count)
        filters = self._filters(query)
        if filters is None:
            return AgentPage([], None, {}), {kind: Facet([], 0) for kind in kinds}
        after = decode_ranked_cursor(query.cursor)
        found = self._ranked.rank(query.text, filters, query.ranking, None, TEXT_MATCHES)
        facets = self._facets.among([result.pk for result in found], kinds, limit, min_count) if kinds else {}
        following = [result for result in found if after is None or result.key > after][: query.limit + 1]
        return self._page_of(query, following, after), facets

    def _ranked_page(self, query: AgentQuery, filters: SearchFilters) -> AgentPage:
        after = decode_ranked_cursor(query.cursor)
        return self._page_of(
            query, self._ranked.rank(query.text or "", filters, query.ranking, after, query.limit + 1), after
        )

    def _page_of(self, query: AgentQuery, ranked: list[Ranked], after: RankKey | None) -> AgentPage:
        """The page of `ranked`, the up to `limit` + 1 results after `after` (one more: is there a next page)."""
        page = ranked[: query.limit]
        rows = {row.pk: row for row in self._listed([result.pk for result in page])}
        agents = [rows[result.pk] for result in page if result.pk in rows]  # removed meanwhile: gone
        suggested = self._suggested_tags(query.text or "") if not ranked and after is None else None
        return AgentPage(
            agents,
            encode_ranked_cursor(page[-1].key) if len(ranked) > len(page) else None,
            {result.pk: result.relevance for result in page},
            suggested,
        )

    def _listed(self, pks: list[int], columns: tuple[str, ...] | None = None) -> list[Row[Any]]:
        return self._store.search(SearchFilters([], [], among=pks), 0, len(pks), columns) if pks else []

    def _suggested_tags(self, text: str) -> list[str]:
        """Tags of the agents nearest in meaning to what found nothing (or, with semantic search
        off, tags that begin like its words), most common first."""
        query = self._ranked.embed(text)
        if query is None:
            found = [tag for word in text.split()[:4] for tag, _ in self.tags(SUGGESTED_TAGS, word)]
            return list(dict.fromkeys(found))[:SUGGESTED_TAGS]
        nearest = [pk for pk, _ in self._ranked.nearest(query, 10)]
        rows = {row.pk: row for row in self._listed(nearest, ("pk", "status", "tags"))}
        counts: dict[str, int] = {}  # in order of first appearance, nearest agent first
        for pk in nearest:
            row = rows.get(pk)
            for tag in row.tags if row is not None and row.status == "active" else ():
                counts[tag] = counts.get(tag, 0) + 1
        return sorted(counts, key=lambda tag: -counts[tag])[:SUGGESTED_TAGS]

    def _filters(self, query: AgentQuery) -> SearchFilters | None:
        """None when no agent can match (a health or status filter and a group share no value).
        Raises InvalidRequest for more than MAX_SEARCH_TAGS tags, or a bad any-of group (`AnyOf.of`)."""
        if len(query.tags) > MAX_SEARCH_TAGS:
            # Each tag is a probe or a range of its own in the statement, and each count of them
            # a statement shape kept for reuse.
            raise InvalidRequest(f"a search takes at most {MAX_SEARCH_TAGS} tags, not {len(query.tags)}")
        any_of = AnyOf.of(query.any_of)
        terms = list(dict.fromkeys([*query.required_terms(), *any_of.terms]))
        any_tags = sorted({normalize_tag(t)[:MAX_TERM] for t in query.tags}) if query.match_any else []
        allowed_health = narrowed("health", query.health, any_of.health)
        allowed_status = narrowed("status", None if query.status == "any" else query.status, any_of.status)
        if allowed_status is None:  # "any" status is any listed one: entries in review are in no search
            allowed_status = LISTED
        if allowed_health == () or allowed_status == ():
            return None
        groups = any_of.groups_beside(terms)
        (health, healths), (status, statuses) = _one_or_many(allowed_health), _one_or_many(allowed_status)
        if status is not None and not (terms or any_tags or groups or query.text is not None):
            terms, status = [("status", status)], None  # the only filter: its index drives the walk
        # Otherwise the status is checked on the agent's row, with the other per-agent filters,
        # rather than by one more index probe for every candidate.
        return SearchFilters(
            terms,
            any_tags,
            updated_since=query.updated_since,
            health=health,
            dead_cutoff=self._dead_cutoff(query),
            status=status,
            any_terms=groups,
            health_in=healths,
            status_in=statuses,
        )

    def reindex(self, every: bool = False, progress: Callable[[int], None] = lambda done: None) -> int:
        """Rebuild the search index (`registry.catalog.reindex`); how many agents."""
        return SearchReindex(self._store).run(every, progress)

    def _dead_cutoff(self, query: AgentQuery) -> dt.datetime | None:
        """Issue 5: agents down since before this time leave default search."""
        if query.include_dead or self._hide_dead_after is None:
            return None
        return self._clock() - dt.timedelta(seconds=self._hide_dead_after)

    def get(self, agent_id: str, *, unlisted: bool = False) -> Row[Any]:
        """The agent as the API lists it (`registry.catalog.store.LISTED_COLUMNS`). Raises NotFound,
        also for an entry in review (pending or rejected) unless `unlisted` (its reader may see it)."""
        row = self._store.listed(agent_id)
        if row is None or (row.status in UNLISTED and not unlisted):
            raise NotFound(f"no agent with id {agent_id!r}")
        return row

    def card(self, agent_id: str, version: int | None = None) -> AgentCard:
        """The current card (or a given version), verbatim. Raises NotFound."""
        cards = self._store.cards(agent_id, version)
        if not cards:
            raise NotFound(f"no card {'version ' + str(version) + ' ' if version else ''}for agent {agent_id!r}")
        return cards[0]

    def versions(self, agent_id: str) -> list[dict[str, Any]]:
        """Every stored version, newest first, each with what changed since the one before."""
        cards = self._store.cards(agent_id, every=True)
        if not cards:
            raise NotFound(f"no agent with id {agent_id!r}")
        history, previous = [], None
        for card in cards:
            parsed = json.loads(card.raw)
            history.append(_version_entry(card, None if previous is None else card_drift(previous, parsed)))
            previous = parsed
        return list(reversed(history))

    def tags(self, limit: int = 200, prefix: str | None = None) -> list[tuple[str, int]]:
        """Tags of active agents with how many agents carry each, most used first."""
        return self._store.tags(limit, normalize_tag(prefix) if prefix else None)


def _one_or_many(states: tuple[str, ...] | None) -> tuple[str | None, tuple[str, ...]]:
    """Allowed states as filters: one state (compared), or several (a list); neither for any."""
    if states is None:
        return None, ()
    return (states[0], ()) if len(states) == 1 else (None, states)


def _version_entry(card: AgentCard, drift: dict[str, list[str]] | None) -> dict[str, Any]:
    return {
        "version": card.version,
        "isCurrent": card.is_current,
        "source": card.source,
        "fetchedFrom": card.fetched_from,
        "fetchedAt": card.fetched_at.isoformat(),
        "sha256": card.sha256,
        "protocolVersion": card.protocol_version,
        "valid": card.valid,
        "issues": card.issues,
        "changes": drift,
    }
