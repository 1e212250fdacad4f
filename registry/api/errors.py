"""The one place where errors become HTTP responses: `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException

from registry import errors, jsontext
from registry.catalog import AgentTimeout, CardFetchError, CardTooLarge
from registry.discovery import ARD_PATH, MANIFEST_PATHS
from registry.outbound import OutboundError, OutboundRefused
from registry.trust import RegistryKeyUnavailable, SignatureRequired
from registry.web import html_error, is_page_request

log = logging.getLogger(__name__)

# By class, the most specific first found along an error's MRO. The relay's and health's errors
# also subclass the generic error whose status they share (e.g. `TaskMismatch` is a `Conflict`).
STATUS_BY_ERROR: dict[type[errors.RegistryError], int] = {
    errors.BadRequest: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.PayloadTooLarge: 413,
    errors.UnsupportedMediaType: 415,
    errors.TooManyRequests: 429,
    errors.InvalidRequest: 422,
    errors.InvalidUrl: 400,
    errors.InvalidCard: 422,
    SignatureRequired: 422,
    RegistryKeyUnavailable: 503,
    OutboundRefused: 422,
    OutboundError: 502,
    CardFetchError: 502,
    AgentTimeout: 504,
    CardTooLarge: 413,
}


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> Response:
    """Needs no application context (the relay ingress answers outside Flask)."""
    body = jsontext.dumps(
        {"error": {"code": code, "message": message, "details": details or {}}}, default=DefaultJSONProvider.default
    )  # rendered as `jsonify` renders it
    response = Response(body, status=status, mimetype="application/json")
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="agentdex"'
    if status == 429 and details and "retryAfter" in details:
        response.headers["Retry-After"] = str(details["retryAfter"])
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Exception)  # werkzeug's HTTPExceptions included; Flask's routing redirects are not
    def _any_error(error: Exception) -> Response:
        response = exception_response(error, app.config["MAX_CONTENT_LENGTH"])
        if request.path.startswith(ARD_PATHS):
            return ard_envelope(response)
        return html_error(response) if is_page_request() else response  # the web catalog's pages


# The ARD API and manifest (registry.discovery) answer errors in ARD's envelope (ARD v0.91 §5.3,
# the OpenAPI `Error`): `{"errorCode", "message"}`, with ARD's codes for the same HTTP statuses.
ARD_PATHS = (ARD_PATH + "/", *MANIFEST_PATHS)
ARD_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RATE_LIMIT_EXCEEDED",
    501: "NOT_IMPLEMENTED",
}


def ard_envelope(response: Response) -> Response:
    """A response of `exception_response` in ARD's envelope; other 4xx are INVALID_ARGUMENT."""
    message = jsontext.loads(response.get_data())["error"]["message"]
    status = response.status_code
    code = ARD_CODES.get(status) or ("INVALID_ARGUMENT" if 400 <= status < 500 else "INTERNAL_ERROR")
    response.set_data(jsontext.dumps({"errorCode": code, "message": message}))
    return response


def exception_response(error: Exception, body_limit: int) -> Response:
    """Any exception as the API answers it; `body_limit` is the request-body limit a 413 names."""
    if isinstance(error, errors.RegistryError):
        return error_response(_status(error), error.code, error.message, error.details)
    if isinstance(error, HTTPException):
        code = (error.name or "error").lower().replace(" ", "_")
        message = error.description or error.name
        if error.code == 413:
            code, message = "payload_too_large", f"the request body is over the limit of {body_limit} bytes"
        response = error_response(error.code or 500, code, message)
        if error.code == 405:
            response.headers.extend((name, value) for name, value in error.get_headers() if name.lower() == "allow")
        return response
    log.error("unhandled error", exc_info=error)
    return error_response(500, "internal_error", "the registry failed unexpectedly; the error was logged")


def _status(error: errors.RegistryError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500
