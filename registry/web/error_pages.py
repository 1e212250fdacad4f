"""Errors of requests for pages, as a page: a person who follows a broken link gets the status in
words and a way home, not a JSON envelope. `registry.api.errors` renders every error and asks
`is_page_request` whether to hand its response to `html_error`."""

from __future__ import annotations

from flask import Response, render_template, request

from registry import jsontext
from registry.web.security import protect

# The first path segments of the API, the A2A and ARD endpoints and the well-known documents: their
# errors keep their envelopes. Every other GET is for a page (or a mistyped one).
API_SEGMENTS = frozenset({"v1", "a2a", "ard", ".well-known", "relay", "openapi.json", "healthz", "metrics"})
TITLES = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    413: "Too large",
    429: "Too many requests",
    500: "Something went wrong",
    502: "Bad gateway",
    503: "Unavailable",
    504: "Timed out",
}


def is_page_request() -> bool:
    """Whether the current request asks for a page: a GET (or HEAD) outside the API's paths from
    a client that does not prefer JSON."""
    if request.method not in ("GET", "HEAD"):
        return False
    if request.path.lstrip("/").split("/", 1)[0] in API_SEGMENTS:
        return False
    return request.accept_mimetypes.best_match(("text/html", "application/json")) != "application/json"


def html_error(response: Response) -> Response:
    """The API's error `response` (`registry.api.errors`) as an HTML page: the same status and
    headers (`Allow`, `Retry-After`), its message in words."""
    message = jsontext.loads(response.get_data())["error"]["message"]
    status = response.status_code
    title = TITLES.get(status) or ("Request refused" if status < 500 else "Something went wrong")
    response.set_data(render_template("error.html", status=status, title=title, message=message))
    response.mimetype = "text/html"
    return protect(response)
