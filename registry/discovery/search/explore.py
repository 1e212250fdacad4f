"""`POST {base}/explore` (ARD v0.91 §5.3.3): facet counts over the agents a query matches. Explore
does not federate (ADR-0005): the counts are this registry's.

Facet fields: type, tags, publisher, inputModes, outputModes, capabilities, protocolVersion,
health, signature. `limit` (default 20) above `MAX_FACET_LIMIT` is served as that many buckets.
"""

from __future__ import annotations

from typing import Any

from registry.discovery.search.index import FACET_KINDS, AgentIndex
from registry.discovery.search.request import InvalidArgument, context_prefixes, read_query, refuse_members, resolve_key

FACET_FIELDS = ("type", *FACET_KINDS)
DEFAULT_FACET_LIMIT, MAX_FACET_LIMIT = 20, 1_000
MAX_FACETS = 20
_EXAMPLE = '{"facets": [{"field": "tags", "limit": 10}]}'


def explore(index: AgentIndex, body: dict[str, Any]) -> dict[str, Any]:
    """The explore response for a request body. Raises InvalidArgument."""
    refuse_members(body, ("query", "resultType"), "the explore request")
    query = read_query(body, text_required=False)
    sent = body.get("query")
    fields = read_facets(body.get("resultType"), context_prefixes(sent.get("@context") if sent else None))
    text = (query.text or "").strip() or None
    return {"resultType": "facets", "facets": index.facets(text, query.selection, fields)}


def read_facets(result_type: Any, prefixes: dict[str, str]) -> list[tuple[str, int, int]]:
    """(field, limit, minCount) of each facet asked for. Raises InvalidArgument."""
    if not isinstance(result_type, dict):
        raise InvalidArgument(f"resultType is required, such as {_EXAMPLE}")
    refuse_members(result_type, ("facets",), "resultType")
    facets = result_type.get("facets")
    if not isinstance(facets, list) or not facets:
        raise InvalidArgument(f"resultType.facets must be a non-empty array, such as {_EXAMPLE}")
    if len(facets) > MAX_FACETS:
        raise InvalidArgument(f"resultType.facets asks for {len(facets)} facets; at most {MAX_FACETS}")
    return [_facet(facet, prefixes, f"resultType.facets[{n}]") for n, facet in enumerate(facets)]


def _facet(facet: Any, prefixes: dict[str, str], where: str) -> tuple[str, int, int]:
    if not isinstance(facet, dict):
        raise InvalidArgument(f'{where} must be an object such as {{"field": "tags"}}')
    refuse_members(facet, ("field", "limit", "minCount"), where)
    field = facet.get("field")
    if not isinstance(field, str):
        raise InvalidArgument(f"{where}.field is required: one of {', '.join(FACET_FIELDS)}")
    try:
        term = resolve_key(field, prefixes)
    except InvalidArgument:
        term = field
    if term not in FACET_FIELDS:
        raise InvalidArgument(f"{where}.field {field!r} is not a facet here; facets: {', '.join(FACET_FIELDS)}")
    limit = _whole(facet.get("limit"), DEFAULT_FACET_LIMIT, 1, f"{where}.limit")
    return term, min(limit, MAX_FACET_LIMIT), _whole(facet.get("minCount"), 1, 0, f"{where}.minCount")


def _whole(value: Any, default: int, low: int, where: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgument(f"{where} must be a whole number from {low}")
    return min(value, 2**31)  # beyond any count, and within what a database binds
