"""Catalog-wide endpoints: tags with counts, card validation."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from registry.request_input import json_body, query_int, refuse_unknown
from registry.validation import validate_card

bp = Blueprint("catalog", __name__)


@bp.get("/v1/tags")
def tags() -> Response:
    refuse_unknown(request.args.keys(), {"limit", "prefix"}, "query parameters")
    limit = query_int("limit", 200, 1, 1000)
    rows = current_app.extensions["agentdex"].search.tags(limit, request.args.get("prefix"))
    return jsonify({"items": [{"tag": tag, "count": count} for tag, count in rows]})


@bp.post("/v1/validate")
def validate() -> Response:
    card, raw = json_body()
    limits = current_app.extensions["agentdex"].limits
    return jsonify(validate_card(card, limits=limits, raw_size=len(raw)).to_dict())
