"""`GET /metrics` (the text exposition) and the timing of every HTTP request.

AGENTDEX_METRICS: `on` serves it to anyone, `token` only to an admin or `metrics:read` token,
`off` not at all (404, and the null recorder records nothing). Requests are timed at the WSGI
edge, so the relay ingress answered in front of Flask counts too; the route label is the URL rule
that matched (a template, never a concrete path), left in the environ by whichever layer matched it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request

from registry.auth import bearer_actor
from registry.errors import Forbidden
from registry.metrics.recorder import ROUTE_KEY, UNMATCHED_ROUTE, Metrics

SCOPE = "metrics:read"

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    services = current_app.extensions["agentdex"]
    if services.settings.operations.metrics == "token":
        actor = bearer_actor()
        if not actor.can(SCOPE):
            raise Forbidden(f"the token lacks the {SCOPE!r} scope")
    body, content_type = services.metrics.scrape()
    return Response(body, content_type=content_type, headers={"Cache-Control": "no-store"})


def register_metrics(app: Flask, metrics: Metrics) -> None:
    """Serve /metrics and time every request, unless metrics are off. Call it after the other
    WSGI middleware that answers requests (the relay ingress), so that they are timed too."""
    if not metrics.enabled:
        return
    app.register_blueprint(bp)
    app.after_request(_leave_route)
    app.wsgi_app = TimedRequests(app.wsgi_app, metrics)  # type: ignore[method-assign]


def _leave_route(response: Response) -> Response:
    if request.url_rule is not None:
        request.environ[ROUTE_KEY] = request.url_rule.rule
    return response


class TimedRequests:
    """WSGI middleware: one `Metrics.http_request` per request, once the app has answered (the
    time to send a streamed body is not included)."""

    def __init__(self, next_app: Any, metrics: Metrics, monotonic: Callable[[], float] = time.perf_counter) -> None:
        self._next = next_app
        self._metrics = metrics
        self._monotonic = monotonic

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = self._monotonic()
        statuses: list[str] = []

        def start(status: str, headers: Any, exc_info: Any = None) -> Any:
            statuses.append(status)
            return start_response(status, headers, exc_info)

        try:
            body: Iterable[bytes] = self._next(environ, start)
            return body
        finally:
            status = int(statuses[-1][:3]) if statuses else 500  # raised before answering
            route = environ.get(ROUTE_KEY, UNMATCHED_ROUTE)
            self._metrics.http_request(route, environ.get("REQUEST_METHOD", ""), status, self._monotonic() - started)
