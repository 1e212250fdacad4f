"""`GET /v1/agents/<id>/listings`: which domains' ARD manifests list an agent (provenance of the
manifest crawl), mounted under the catalog's agents like health and signatures."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from registry.catalog import api_time
from registry.request_input import refuse_unknown

bp = Blueprint("manifest_listings", __name__, url_prefix="/v1/agents")


def listing_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "domain": row["domain"],
        "manifestUrl": row["manifest_url"],
        "catalogUrl": row["catalog_url"],
        "identifier": row["identifier"],
        "listed": row["listed"],
        "registeredByCrawl": row["owned"],
        "firstListedAt": api_time(row["first_listed_at"]),
        "lastListedAt": api_time(row["last_listed_at"]),
        "delistedAt": api_time(row["delisted_at"]),
    }


@bp.get("/<agent_id>/listings")
def listings(agent_id: str) -> Response:
    refuse_unknown(request.args.keys(), set(), "query parameters")
    rows = current_app.extensions["agentdex"].manifest_crawl.listings.listed_by(agent_id)
    return jsonify({"items": [listing_json(row) for row in rows]})
