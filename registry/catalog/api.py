"""`/v1/agents`: register, read, search, change and remove agents."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from sqlalchemy import Row

from registry import heap
from registry.auth import Actor, bearer_actor, requires
from registry.catalog.gate import UNLISTED
from registry.catalog.presenters import agent_json, page_json
from registry.catalog.search import CAPABILITIES, HEALTH_FILTERS, STATUS_FILTERS, AgentPage, AgentQuery
from registry.errors import BadRequest, InvalidRequest, NotFound
from registry.metrics import count_registration, counting_registration
from registry.request_input import (
    current_actor,
    json_body,
    json_object,
    query_choice,
    query_int,
    query_time,
    refuse_unknown,
    string_field,
)
from registry.retrieval.scoring import RANKINGS
from registry.trust import SIGNATURE_STATES, endorsed_card_response

bp = Blueprint("agents", __name__, url_prefix="/v1/agents")

SEARCH_PARAMS = {
    "tag",
    "match",
    "q",
    "ranking",
    "skill",
    "inputMode",
    "outputMode",
    "capability",
    "protocolVersion",
    "status",
    "updatedSince",
    "health",
    "includeDead",
    "signature",
    "limit",
    "cursor",
}


def _services() -> Any:
    return current_app.extensions["agentdex"]


@bp.app_url_value_preprocessor
def resolve_agent_id(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Wherever a path takes an agent id, a unique prefix of it will do (`agentdex show 5b0c1d2e`).
    Registered for the whole app, so the sub-resources other domains mount under
    `/v1/agents/<agent_id>/` (health, signatures) resolve it here too, without knowing the catalog."""
    if values and "agent_id" in values:
        values["agent_id"] = _services().catalog.resolve_id(values["agent_id"])


def _agent_response(agent_id: str) -> Response:
    return jsonify(agent_json(_visible(agent_id)))


def _visible(agent_id: str) -> Row[Any]:
    """The agent, if the caller may read it: an entry in review (pending, rejected) only to those the
    registration gate shows it to (its owner, its domain's proven owner, admins); else 404."""
    row = _services().search.get(agent_id, unlisted=True)
    if row.status in UNLISTED and not _services().catalog.shows(_caller(), agent_id):
        raise NotFound(f"no agent with id {agent_id!r}")
    return row


def _caller() -> Actor | None:
    """Who calls a read that needs no token: None without one; a bad token is refused (401)."""
    return bearer_actor() if "Authorization" in request.headers else None


def _reviewable(page: AgentPage) -> AgentPage:
    """A page of entries in review, cut to those the caller may see (a token is needed: 401).
    The cursor still walks every such entry, so a page may be shorter than `limit`."""
    actor, catalog = bearer_actor(), _services().catalog
    return dataclasses.replace(page, agents=[row for row in page.agents if catalog.shows(actor, row.id)])


@bp.post("")
@requires("agents:write")
def register() -> Response:
    with counting_registration(_services().metrics) as attempt:
        response = _register()
        attempt.outcome = "created" if response.status_code == 201 else "unchanged"
    return response


def _register() -> Response:
    body = json_object()
    refuse_unknown(body, {"url", "card", "cardUrl", "jwksUrl"}, "fields")
    actor = current_actor()
    jwks_url = string_field(body, "jwksUrl")  # the agent's own JWKS (issue 4: key source 1)
    if "card" in body:
        if not isinstance(body["card"], dict):
            raise InvalidRequest("card must be a JSON object (the Agent Card)")
        card_url = string_field(body, "cardUrl", required=True)
        snapshot = _services().catalog.register_card(actor, body["card"], card_url or "", jwks_url=jwks_url)
        manifest: dict[str, Any] = {}
        created = True
    else:
        url = string_field(body, "url", required=True)
        # A domain's URL also registers what its ARD manifest lists (`registry.discovery.crawl.domains`):
        # its own agent as before, if any, plus `manifest` (and `domainCard` when no agent came of it).
        found = _services().manifest_crawl.domains.register(actor, url or "", jwks_url=jwks_url)
        snapshot, manifest, created = found.agent, found.manifest_json(), found.created
    response = jsonify({**(agent_json(snapshot.agent) if snapshot else {}), **manifest})
    response.status_code = 201 if created else 200
    if snapshot:
        response.headers["Location"] = f"{request.script_root}{bp.url_prefix}/{snapshot.agent.id}"
    return response


@bp.post("/import")
@requires("agents:write")
def import_cards() -> Response:
    with heap.collections_paused():  # the batch's objects all live until it is done
        return _import_cards()


def _import_cards() -> Response:
    # Bulk bodies are larger than single registrations; the limit is checked before reading.
    request.max_content_length = _services().settings.max_import_bytes
    body = json_object()
    refuse_unknown(body, {"items"}, "fields")
    items = body.get("items")
    limit = _services().settings.max_import_batch
    if not isinstance(items, list) or not items:
        raise InvalidRequest('items must be a non-empty list of {"card", "cardUrl"} objects')
    if len(items) > limit:
        raise InvalidRequest(f"at most {limit} items per import request")
    outcomes = _services().catalog.import_cards(current_actor(), items)
    for outcome in outcomes:
        error = outcome.error or {}
        count_registration(_services().metrics, error.get("code", "created"), error.get("details"))
    results = [{"index": o.index, "id": o.agent_id, "error": o.error} for o in outcomes]
    return jsonify(
        {
            "created": sum(1 for o in outcomes if o.agent_id),
            "failed": sum(1 for o in outcomes if o.error),
            "results": results,
        }
    )


@bp.get("")
def search() -> Response:
    refuse_unknown(request.args.keys(), SEARCH_PARAMS, "query parameters")
    capabilities = tuple(request.args.getlist("capability"))
    for capability in capabilities:
        if capability not in CAPABILITIES:
            raise InvalidRequest(f"capability must be one of {list(CAPABILITIES)}, not {capability!r}")
    query = AgentQuery(
        tags=tuple(t for t in request.args.getlist("tag") if t.strip()),
        match_any=query_choice("match", ("all", "any"), "all") == "any",
        text=request.args.get("q"),
        skill=request.args.get("skill"),
        input_mode=request.args.get("inputMode"),
        output_mode=request.args.get("outputMode"),
        capabilities=capabilities,
        protocol_version=request.args.get("protocolVersion"),
        status=query_choice("status", (*STATUS_FILTERS, *UNLISTED), "active") or "active",
        updated_since=query_time("updatedSince"),
        health=query_choice("health", HEALTH_FILTERS),
        include_dead=query_choice("includeDead", ("true", "false"), "false") == "true",
        signature=query_choice("signature", SIGNATURE_STATES),
        ranking=query_choice("ranking", RANKINGS, "fused") or "fused",
        limit=query_int("limit", 50, 1, _services().settings.page_limit_max),
        cursor=request.args.get("cursor"),
    )
    page = _services().search.search(query)
    return jsonify(page_json(_reviewable(page) if query.status in UNLISTED else page))


@bp.get("/<agent_id>")
def get_agent(agent_id: str) -> Response:
    refuse_unknown(request.args.keys(), set(), "query parameters")
    return _agent_response(agent_id)


@bp.get("/<agent_id>/card")
def get_card(agent_id: str) -> Response:
    refuse_unknown(request.args.keys(), {"version", "endorsed"}, "query parameters")
    version = query_int("version", 0, 1, 1_000_000_000) or None
    _visible(agent_id)
    if query_choice("endorsed", ("true", "false"), "false") == "true":
        return endorsed_card_response(_services().trust_reads.endorsed_card(agent_id, version, request.host_url))
    card = _services().search.card(agent_id, version)
    response = Response(card.raw, mimetype="application/json")
    response.headers["ETag"] = f'"{card.sha256}"'
    return response


@bp.get("/<agent_id>/versions")
def versions(agent_id: str) -> Response:
    refuse_unknown(request.args.keys(), set(), "query parameters")
    _visible(agent_id)
    return jsonify({"items": _services().search.versions(agent_id)})


@bp.put("/<agent_id>/card")
@requires("agents:write")
def replace_card(agent_id: str) -> Response:
    card, raw = json_body()
    if not isinstance(card, dict):
        raise BadRequest("the body must be the Agent Card, a JSON object")
    return _changed_response(agent_id, _services().catalog.replace_card(current_actor(), agent_id, card, raw))


@bp.post("/<agent_id>/refresh")
@requires("agents:write")
def refresh(agent_id: str) -> Response:
    return _changed_response(agent_id, _services().catalog.refresh(current_actor(), agent_id))


def _changed_response(agent_id: str, changed: bool) -> Response:
    """The agent as it is now, saying whether the request changed its card."""
    response = _agent_response(agent_id)
    response.headers["X-Agentdex-Changed"] = "true" if changed else "false"
    return response


@bp.patch("/<agent_id>")
@requires("agents:write")
def update_status(agent_id: str) -> Response:
    body = json_object()
    refuse_unknown(body, {"status", "statusMessage", "jwksUrl"}, "fields")
    if not body:
        raise InvalidRequest("send status, statusMessage and/or jwksUrl")
    if "jwksUrl" in body:  # null clears it; the current card is verified again either way
        _services().trust.set_jwks_url(current_actor(), agent_id, string_field(body, "jwksUrl") or None)
    if body.keys() & {"status", "statusMessage"}:
        _services().catalog.update_status(
            current_actor(), agent_id, string_field(body, "status"), string_field(body, "statusMessage")
        )
    return _agent_response(agent_id)


@bp.delete("/<agent_id>")
@requires("agents:write")
def delete(agent_id: str) -> Response:
    _services().catalog.delete(current_actor(), agent_id)
    return Response(status=204)
