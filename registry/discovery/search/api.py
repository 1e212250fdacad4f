"""The ARD API's search routes (ARD v0.91 §5.3) under `ARD_PATH`: `POST {base}/search`,
`POST {base}/explore`, `GET {base}/agents`. Errors are answered in ARD's envelope by
`registry.api.errors`; every refusal here is 400 INVALID_ARGUMENT with a message naming the member.

A federated search reports upstreams that failed in the response header `ARD-Federation-Failed`
(an RFC 8941 list: `"<upstream>";reason="…"`), since the search response's schema admits no other
member; `ARD-Federation-Local-Only` says why an `auto` search asked no upstream (max-hops,
repeated-request, no-time-left).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.discovery.links import ARD_PATH, ard_base, public_url
from registry.discovery.search.explore import explore
from registry.discovery.search.federation import Inbound, UpstreamFailure
from registry.discovery.search.filter_syntax import check_order, parse_filter
from registry.discovery.search.index import AgentIndex
from registry.discovery.search.paging import Place, decode_token, encode_token, fingerprint
from registry.discovery.search.ranked import ArdSearch, page_size, read_search
from registry.discovery.search.request import InvalidArgument, refuse_members
from registry.request_input import json_object

bp = Blueprint("ard", __name__, url_prefix=ARD_PATH)

FAILED = "ARD-Federation-Failed"
LOCAL_ONLY = "ARD-Federation-Local-Only"
LIST_PARAMETERS = ("filter", "orderBy", "pageSize", "pageToken")
DEFAULT_LIST_SIZE = 20


def _services() -> Any:
    return current_app.extensions["agentdex"]


def _index() -> AgentIndex:
    settings = _services().settings
    return AgentIndex(_services().search, public_url(settings), ard_base(settings), semantic=settings.search_semantic)


@bp.post("/search")
def search() -> Response:
    searched = read_search(json_object())
    answer = ArdSearch(_index(), _services().federation).search(searched, Inbound.from_headers(request.headers.get))
    response = jsonify(answer.body)
    if answer.failures:
        response.headers[FAILED] = failures_header(answer.failures)
    if answer.local_only:
        response.headers[LOCAL_ONLY] = answer.local_only
    return response


@bp.post("/explore")
def explore_facets() -> Response:
    return jsonify(explore(_index(), json_object()))


@bp.get("/agents")
def list_agents() -> Response:
    """ARD v0.91 §5.3.4: deterministic pages; `total` when the filter can be counted."""
    refuse_members(dict.fromkeys(request.args), LIST_PARAMETERS, "the query string", "parameter")
    for name in LIST_PARAMETERS:
        if len(request.args.getlist(name)) > 1:
            raise InvalidArgument(f"give {name} once")
    text = request.args.get("filter") or ""
    selection = parse_filter(text)
    check_order(request.args.get("orderBy"))
    query = fingerprint("agents", text)
    places = decode_token(request.args.get("pageToken"), query, 1) or [Place(0)]
    index = _index()
    page = index.listed(selection, places[0].token, _list_size(request.args.get("pageSize")), scored=False)
    body: dict[str, Any] = {"items": page.entries}
    total = index.total(selection)
    if total is not None:
        body["total"] = total
    token = encode_token(query, [Place(0, page.next_place)] if page.next_place else [])
    if token:
        body["pageToken"] = token
    return jsonify(body)


def _list_size(raw: str | None) -> int:
    """The search body's `pageSize` rule, read from the query string (text that is no whole number is refused)."""
    return page_size(int(raw) if raw is not None and raw.isascii() and raw.isdigit() else raw, DEFAULT_LIST_SIZE)


def failures_header(failures: list[UpstreamFailure]) -> str:
    """RFC 8941 list of strings with a `reason` parameter each."""
    return ", ".join(f"{_sf_string(f.upstream)};reason={_sf_string(f.reason)}" for f in failures)


def _sf_string(text: str) -> str:
    printable = "".join(char if " " <= char <= "~" else "?" for char in text[:300])
    return '"' + printable.replace("\\", "\\\\").replace('"', '\\"') + '"'
