"""The one place where errors become HTTP responses: `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException

from registry import errors, jsontext
from registry.outbound import OutboundError, OutboundRefused
from registry.catalog import fetcher as card_fetcher

log = logging.getLogger(__name__)

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
    errors.InvalidCard: 422,
    errors.SignatureRequired: 422,
    errors.RegistryKeyUnavailable: 503,
    errors.OutboundRefused: 422,
    errors.AgentUnreachable: 502,
    errors.AgentTimeout: 504,
}


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> Response:
    """Needs no application context (the relay ingress answers outside Flask)."""
    body = jsontext.dumps({"error": {"code": code, "message": message, "details": details or {}}},
                          default=DefaultJSONProvider.default)  # rendered as `jsonify` renders it
    response = Response(body, status=status, mimetype="application/json")
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="agentdex"'
    if status == 429 and details and "retryAfter" in details:
        response.headers["Retry-After"] = str(details["retryAfter"])
    return response


def translate_fetch_error(error: Exception) -> errors.RegistryError:
    """Card-fetch and outbound errors, as the registry error a caller should see."""
    message = str(error)
    if isinstance(error, OutboundRefused):
        return errors.OutboundRefused(message)
    if isinstance(error, card_fetcher.AgentTimeout):
        return errors.AgentTimeout(message)
    if isinstance(error, card_fetcher.CardTooLarge):
        return errors.PayloadTooLarge(message)
    if isinstance(error, (card_fetcher.CardNotFound, card_fetcher.CardNotJson)):
        return errors.AgentUnreachable(message, {"reason": type(error).__name__})
    return errors.AgentUnreachable(message)


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Exception)  # werkzeug's HTTPExceptions included; Flask's routing redirects are not
    def _any_error(error: Exception) -> Response:
        return exception_response(error, app.config["MAX_CONTENT_LENGTH"])


def exception_response(error: Exception, body_limit: int) -> Response:
    """Any exception as the API answers it; `body_limit` is the request-body limit a 413 names."""
    if isinstance(error, errors.RegistryError):
        return error_response(_status(error), error.code, error.message, error.details)
    if isinstance(error, (card_fetcher.CardFetchError, OutboundError)):
        return exception_response(translate_fetch_error(error), body_limit)
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
