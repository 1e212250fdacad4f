"""Endpoints about the service itself: liveness and the OpenAPI document."""

from __future__ import annotations

import os
import secrets

from flask import Blueprint, Response, jsonify

from registry.api.openapi import openapi_document

bp = Blueprint("service", __name__)


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
