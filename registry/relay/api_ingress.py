"""`POST /relay/{subscription_id}`, where agents push, served as plain WSGI in front of the Flask
app: Flask's contexts, URL map, signals and response finalisation were a quarter of its CPU per
notification. Errors are answered by the API's own renderer, as a Flask view would answer them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from werkzeug.exceptions import MethodNotAllowed
from werkzeug.wrappers import Request, Response

from registry import errors, jsontext
from registry.metrics import ROUTE_KEY
from registry.relay.agent_jwt import bearer
from registry.relay.ingress import Notification, RelayIngress
from registry.request_input import refuse_nul_in_segment
from registry.settings import Settings

PREFIX = "/relay/"
TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")


def relay_url(base: str, sub_id: str) -> str:
    """What the client hands the agent (`base`: AGENTDEX_PUBLIC_URL, or this request's host URL)."""
    return f"{base.rstrip('/')}/relay/{sub_id}"


class _Relay(Protocol):
    ingress: RelayIngress


class WiredServices(Protocol):
    """What the endpoint reads of the container's services, per request (tests swap them)."""

    settings: Settings
    relay: _Relay


# An exception as the API answers it, given the request-body limit a 413 names.
ErrorRenderer = Callable[[Exception, int], Response]
WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]
# Wraps the endpoint's WSGI app in a server span named by its route (`registry.observability`).
Traced = Callable[[WsgiApp, str], WsgiApp]
ROUTE = "/relay/<sub_id>"
SUB_ID_KEY = "agentdex.relay.sub_id"


def _untraced(app: WsgiApp, route: str) -> WsgiApp:
    return app


class RelayIngressEndpoint:
    """WSGI middleware: `/relay/<id>` here, everything else to `next_app` (Flask)."""

    def __init__(
        self, next_app: Any, services: WiredServices, answer_error: ErrorRenderer, traced: Traced = _untraced
    ) -> None:
        self._next = next_app
        self._services = services  # read per request, as a Flask view reads `current_app.extensions`
        self._answer_error = answer_error
        self._answer = traced(self._answer_relay, ROUTE)  # its own server span: Flask's never sees it

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        # One path segment, as Flask's default converter reads it (WSGI's str is latin-1).
        sub_id = (
            path.removeprefix(PREFIX).encode("latin-1").decode("utf-8", "replace") if path.startswith(PREFIX) else ""
        )
        if not sub_id or "/" in sub_id:
            return self._next(environ, start_response)
        environ[ROUTE_KEY] = ROUTE  # the route label of its request metrics
        environ[SUB_ID_KEY] = sub_id
        return self._answer(environ, start_response)

    def _answer_relay(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        sub_id = environ[SUB_ID_KEY]
        limit = self._services.settings.relay.max_body_bytes
        try:
            if environ.get("REQUEST_METHOD") != "POST":
                raise MethodNotAllowed(["POST"])
            response = self._ingest(Request(environ), sub_id, limit)
        except Exception as error:  # answered as the Flask app answers it
            response = self._answer_error(error, limit)
        return response(environ, start_response)

    def _ingest(self, request: Request, sub_id: str, limit: int) -> Response:
        refuse_nul_in_segment("sub_id", sub_id)  # as the Flask routes refuse it, before any look-up
        body = _notification_body(request, limit)
        authorization = request.headers.get("Authorization")
        tokens = tuple(t for t in [*map(request.headers.get, TOKEN_HEADERS), bearer(authorization)] if t)
        base = self._services.settings.public_url or request.host_url
        notification = Notification(sub_id, body, tokens, authorization, lambda: relay_url(base, sub_id))
        accepted = self._services.relay.ingress.accept(notification)
        payload = {"id": accepted.message_id, "subscriptionId": accepted.subscription_id, "taskId": accepted.task_id}
        payload |= {"kind": accepted.kind, "status": "accepted"}
        return Response(jsontext.dumps(payload), status=202, mimetype="application/json")


def _notification_body(request: Request, limit: int) -> bytes:
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        message = f"push notifications are JSON (Content-Type: application/json), not {mimetype or 'none'!r}"
        raise errors.UnsupportedMediaType(message)
    if request.content_length is not None and request.content_length > limit:
        message = f"the notification is {request.content_length} bytes; the limit is {limit}"
        raise errors.PayloadTooLarge(message, {"limit": limit})
    # A body without a length (chunked) is read to one byte past the limit: werkzeug stops a
    # stream at its limit without saying so, and a cut notification must not pass for a whole one.
    request.max_content_length = limit + 1
    body = request.get_data(cache=False)
    if len(body) > limit:
        raise errors.PayloadTooLarge(f"the notification is over the limit of {limit} bytes", {"limit": limit})
    if not body:
        raise errors.InvalidRequest("the notification has no body")
    return body
