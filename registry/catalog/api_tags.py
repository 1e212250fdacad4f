"""Catalog-wide endpoints: tags with counts, card validation, the OpenAPI document."""

from __future__ import annotations

import os
import secrets

from flask import Blueprint, Response, current_app, jsonify, request

from registry.api.openapi import openapi_document
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


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(openapi_document())


WORKER_HEADER = "Agentdex-Worker"
_worker: tuple[int, str] = (0, "")


def worker_name() -> str:
    """A random name of this web process (a new one after a fork). It says which process answered
    without saying anything about it: `agentdex import` spreads its connections over the processes
    of a multi-process server with it."""
    global _worker
    if _worker[0] != os.getpid():
        _worker = (os.getpid(), secrets.token_hex(6))
    return _worker[1]


@bp.get("/healthz")
def healthz() -> Response:
    response = jsonify({"status": "ok"})
    response.headers[WORKER_HEADER] = worker_name()
    return response
