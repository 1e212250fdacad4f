"""`POST {base}/search` (ARD v0.91 §5.3.2, §5.4): this registry's ranked results, with the
upstream registries' merged in (`auto`), offered as referrals (`referrals`) or not at all (`none`).

A text ranks agents by the catalog's ranked search (stemmed BM25F and meaning, the same on both
databases), each result's `score` its relevance 0–100 (100 × the ranked search's score in [0, 1]).
An empty text lists every agent the filter selects, in registration order, each with score 100
(an empty text asks for nothing they lack): a walk through the whole index whose pages stay exact.
Health and signature state never hide an agent: they are filters, and the ranked search breaks
ties by them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from registry.discovery.search.federation import Asked, Federation, Inbound, UpstreamFailure, UpstreamPage
from registry.discovery.search.index import AgentIndex
from registry.discovery.search.paging import Place, Window, decode_token, encode_token, fingerprint, merge
from registry.discovery.search.request import InvalidArgument, Query, read_query, refuse_members

FEDERATION_MODES = ("auto", "referrals", "none")
DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 10, 100


@dataclasses.dataclass(frozen=True)
class SearchRequest:
    query: Query
    sent_query: dict[str, Any]  # as the client wrote it: what upstreams are asked
    federation: str
    page_size: int
    page_token: str | None


def read_search(body: dict[str, Any]) -> SearchRequest:
    """A `POST {base}/search` body (`additionalProperties: false`). Raises InvalidArgument."""
    refuse_members(body, ("query", "federation", "pageSize", "pageToken"), "the search request")
    federation = body.get("federation", "auto")
    if federation not in FEDERATION_MODES:
        raise InvalidArgument(f"federation must be one of {', '.join(FEDERATION_MODES)}, not {federation!r}")
    token = body.get("pageToken")
    if token is not None and not isinstance(token, str):
        raise InvalidArgument("pageToken must be a string (the pageToken of the previous page)")
    return SearchRequest(
        read_query(body, text_required=True),
        body["query"],
        federation,
        page_size(body.get("pageSize"), DEFAULT_PAGE_SIZE),
        token,
    )


def page_size(value: Any, default: int) -> int:
    """ARD: at most 100 a page; more is served as 100 (ard-sdk: a registry clamps, never refuses)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"pageSize must be a whole number from 1 (at most {MAX_PAGE_SIZE} are served)")
    return min(value, MAX_PAGE_SIZE)


@dataclasses.dataclass(frozen=True)
class SearchAnswer:
    body: dict[str, Any]
    failures: list[UpstreamFailure]
    local_only: str | None = None  # why an `auto` search asked no upstream, when it had some


class ArdSearch:
    def __init__(self, index: AgentIndex, federation: Federation) -> None:
        self._index = index
        self._federation = federation

    def search(self, request: SearchRequest, inbound: Inbound) -> SearchAnswer:
        upstreams = self._federation.upstreams
        query = fingerprint(request.sent_query, request.federation, upstreams)
        places = decode_token(request.page_token, query, 1 + len(upstreams)) or self._first_places(request)
        places, asked, local_only = self._ask_upstreams(request, places, inbound)
        ours = [self._local_window(request, place) for place in places if not place.source]
        answers = asked.answers() if asked else {}  # while they were asked, our own index was read
        theirs = [self._upstream_window(place, answers) for place in places if place.source]
        results, after = merge([*ours, *(window for window in theirs if window is not None)], request.page_size)
        body: dict[str, Any] = {"results": results}
        if request.federation == "referrals" and upstreams:
            body["referrals"] = self._federation.referrals()
        token = encode_token(query, after)
        if token:
            body["pageToken"] = token
        failures = [answer for answer in answers.values() if isinstance(answer, UpstreamFailure)]
        return SearchAnswer(body, failures, local_only)

    def _ask_upstreams(
        self, request: SearchRequest, places: list[Place], inbound: Inbound
    ) -> tuple[list[Place], Asked | None, str | None]:
        """The upstreams of the page asked (or, when the search must stay local, their places
        dropped, saying why)."""
        if not any(place.source for place in places):
            return places, None, None
        plan = self._federation.plan(inbound)
        if plan.deadline is None:
            return [place for place in places if not place.source], None, plan.local_only
        bodies = {place.source - 1: self._upstream_body(request, place) for place in places if place.source}
        return places, self._federation.ask(plan, bodies), None

    def _first_places(self, request: SearchRequest) -> list[Place]:
        federated = request.federation == "auto"
        return [Place(0), *(Place(i + 1) for i in range(len(self._federation.upstreams) if federated else 0))]

    def _upstream_body(self, request: SearchRequest, place: Place) -> dict[str, Any]:
        body = {"query": request.sent_query, "federation": "auto", "pageSize": request.page_size}
        return {**body, "pageToken": place.token} if place.token else body

    def _local_window(self, request: SearchRequest, place: Place) -> Window:
        text, selection = (request.query.text or "").strip(), request.query.selection
        if text:
            page = self._index.ranked(text, selection, place.token, request.page_size)
        else:
            page = self._index.listed(selection, place.token, request.page_size, scored=True)
        return Window(place, page.entries[place.skip :], page.next_place)

    @staticmethod
    def _upstream_window(place: Place, answers: dict[int, UpstreamPage | UpstreamFailure]) -> Window | None:
        """The upstream's results from its place on; None when it failed."""
        answer = answers.get(place.source - 1)
        if not isinstance(answer, UpstreamPage):
            return None
        return Window(place, answer.results[place.skip :], answer.next_token)
