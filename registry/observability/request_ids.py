"""Request ids: every HTTP exchange gets one, answered as `X-Request-Id` and stamped on each log
line written while it is served, so a caller's report and the operator's logs meet.

A caller's own `X-Request-Id` (a proxy's, a client's) is kept when it is sane: bounded and of
characters that cannot forge a log line or a header; anything else is replaced by a fresh id.
Plain WSGI, outside Flask, so the answers of the relay ingress (served in front of Flask) and of
errors raised before any view carry it too."""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

HEADER = "X-Request-Id"
ENVIRON_KEY = "agentdex.request_id"
MAX_LENGTH = 128
_SANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+=/@-]*")

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentdex_request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request this thread is serving, or None outside a request."""
    return _current.get()


def accepted_request_id(value: str | None) -> str | None:
    """`value` when it may serve as a request id, else None."""
    if value and len(value) <= MAX_LENGTH and _SANE.fullmatch(value):
        return value
    return None


def new_request_id() -> str:
    """128 random bits in hex, as a UUID's would be (`uuid4` costs several times more)."""
    return os.urandom(16).hex()


class RequestIdMiddleware:
    """WSGI middleware: the request's id in `environ[ENVIRON_KEY]`, in `current_request_id()` while
    the app runs, and in the response's `X-Request-Id` header."""

    def __init__(self, app: Any, new_id: Callable[[], str] = new_request_id) -> None:
        self._app = app
        self._new_id = new_id

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request_id = accepted_request_id(environ.get("HTTP_X_REQUEST_ID")) or self._new_id()
        environ[ENVIRON_KEY] = request_id

        def start_with_id(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
            headers[:] = [(name, value) for name, value in headers if name.lower() != "x-request-id"]
            headers.append((HEADER, request_id))
            return start_response(status, headers, *exc_info)

        token = _current.set(request_id)
        try:
            return self._app(environ, start_with_id)
        finally:
            _current.reset(token)
