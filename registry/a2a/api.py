"""The agent's two interfaces as HTTP endpoints: JSON-RPC at `/a2a/jsonrpc` (A2A 1.0 and 0.3)
and HTTP+JSON under `/a2a/rest` (A2A 1.0). Everything under them answers in its binding's shape,
unknown paths and methods, bodies over the limit and refused URLs included."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from registry import jsontext
from registry.a2a import jsonrpc, rest
from registry.a2a.agent import RegistryAgent
from registry.a2a.errors import A2AError, InvalidRequest, PayloadTooLarge, Unauthenticated, from_exception
from registry.auth import Actor, bearer_actor
from registry.errors import Unauthorized

JSONRPC_PATH, REST_PATH = "/a2a/jsonrpc", "/a2a/rest"
A2A_JSON = "application/a2a+json"  # the HTTP+JSON binding's media type (A2A v1.0 §11)
VERSION = "A2A-Version"
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

bp = Blueprint("a2a", __name__)


def _agent() -> RegistryAgent:
    agent: RegistryAgent = current_app.extensions["agentdex"].a2a
    return agent


def _version() -> str | None:
    """A2A v1.0 §3.6.1: the header, or the request parameter of the same name."""
    return request.headers.get(VERSION) or request.args.get(VERSION)


def _caller() -> Actor | None:
    """The caller behind the bearer token, None without one. Raises Unauthenticated."""
    if "Authorization" not in request.headers:
        return None
    try:
        return bearer_actor()
    except Unauthorized as error:
        raise Unauthenticated(error.message) from None


def _body() -> bytes:
    try:
        return request.get_data(cache=True)
    except RequestEntityTooLarge:
        limit = current_app.config["MAX_CONTENT_LENGTH"]
        raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes") from None


def _json(body: dict[str, Any], status: int, mimetype: str = "application/json") -> Response:
    response = Response(jsontext.dumps(body), status=status, mimetype=mimetype)
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="agentdex"'
    return response


@bp.route(JSONRPC_PATH, methods=METHODS)
def jsonrpc_endpoint() -> Response:
    if request.method != "POST":
        refused = InvalidRequest("JSON-RPC requests are POSTed")
        response = _json({"jsonrpc": "2.0", "id": None, "error": refused.jsonrpc_error()}, 405)
        response.headers["Allow"] = "POST"
        return response
    body, error = jsonrpc.answer(_agent(), _body(), _version(), _caller)
    return _json(body, 401 if isinstance(error, Unauthenticated) else 200)


@bp.route(REST_PATH, methods=METHODS)
def rest_root() -> Response:
    return rest_endpoint("")


@bp.route(f"{REST_PATH}/<path:path>", methods=METHODS)
def rest_endpoint(path: str) -> Response:
    asked = rest.RestRequest(request.method, "/" + path, _body(), request.args.to_dict(), _version())
    answer = rest.answer(_agent(), asked, _caller)
    response = _json(answer.body, answer.status, "application/json" if answer.error else A2A_JSON)
    if answer.allow:
        response.headers["Allow"] = answer.allow
    return response


@bp.errorhandler(Exception)
def binding_error(error: Exception) -> Response:
    """What failed before a view could answer (a URL the registry refuses, a body over the limit)."""
    failure: A2AError = from_exception(_registry_error(error))
    if request.path.startswith(REST_PATH):
        return _json(failure.rest_error(), failure.http_status)
    status = 401 if isinstance(failure, Unauthenticated) else 200  # JSON-RPC errors travel in a 200
    return _json({"jsonrpc": "2.0", "id": None, "error": failure.jsonrpc_error()}, status)


def _registry_error(error: Exception) -> Exception:
    if isinstance(error, RequestEntityTooLarge):
        return PayloadTooLarge()
    if isinstance(error, HTTPException):
        return InvalidRequest(error.description or error.name)
    return error
