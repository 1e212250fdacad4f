"""The home page (`/`): one search box that reads the catalog's query syntax, facets with counts
over the query's matches, results a page at a time by cursor. One search and one facet count per
request; everything the page shows is in its URL (`registry.web.search_state`)."""

from __future__ import annotations

import dataclasses

from flask import current_app, render_template, request, url_for

from registry.catalog import CatalogSearch, Facet
from registry.errors import InvalidRequest
from registry.web.blueprint import bp
from registry.web.search_results import ResultCard, facet_groups, result_cards, value_words
from registry.web.search_state import FACET_KINDS, FACETS, SearchState

FACET_VALUES = 10  # per kind; the tags page lists every tag


@dataclasses.dataclass(frozen=True)
class Found:
    cards: list[ResultCard]
    next_cursor: str | None
    facets: dict[str, Facet]
    suggested_tags: list[str]
    ranked: bool  # by relevance to words, rather than in registration order


@bp.get("/")
def home() -> tuple[str, int]:
    services = current_app.extensions["agentdex"]
    state = SearchState.from_args(request.args)
    semantic = services.settings.search_semantic
    try:
        found = _search(services.search, state, semantic)
    except InvalidRequest as error:  # the query syntax's errors included: shown beside the box
        return _render(state, semantic, None, error.message), 400
    return _render(state, semantic, found, None), 200


def _search(search: CatalogSearch, state: SearchState, semantic: bool) -> Found:
    query = state.query(semantic)
    page, facets = search.search_with_facets(query, FACET_KINDS, FACET_VALUES)
    suggested = page.suggested_tags or []
    return Found(result_cards(page.agents), page.next_cursor, facets, suggested, query.text is not None)


def _render(state: SearchState, semantic: bool, found: Found | None, error: str | None) -> str:
    base = url_for("web.home")
    return render_template(
        "home.html",
        section="search",
        state=state,
        base=base,
        semantic=semantic,
        found=found,
        groups=facet_groups(found.facets if found else {}, state),
        legends=dict(FACETS),
        value_words=value_words,
        total=_matches(found.facets) if found else None,
        next_url=state.next(found.next_cursor).url(base) if found and found.next_cursor else None,
        previous=state.previous(),
        error=error,
    )


def _matches(facets: dict[str, Facet]) -> int:
    """How many agents the query matches: each has one health state, so the health facet's counts
    (and those it left out) add up to them."""
    health = facets["health"]
    return sum(count for _, count in health.buckets) + health.other_count
