"""The error a response carries, whichever protocol's envelope it is in: the REST API's
`{"error": {"code", "message", "details"}}`, ARD's `{"errorCode", "message"}` (under /ard/ and the
manifest paths), a JSON-RPC error object (the A2A JSON-RPC binding, HTTP 200 as JSON-RPC allows),
the A2A HTTP+JSON binding's `{"error": {"code": <int>, "status", "message", "details": [...]}}`,
or the web catalog's error page (`registry/web/templates/error.html`: its message in words)."""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

_PAGE_MESSAGE = re.compile(r'<p class="error-message">(.*?)</p>', re.DOTALL)


@dataclasses.dataclass(frozen=True)
class Refusal:
    protocol: str  # "rest", "ard", "jsonrpc", "a2a-rest" or "web"
    code: str
    message: str
    details: dict[str, Any]  # the REST envelope's; {} for the others


def refusal_of(response: Any) -> Refusal | None:
    """The error `response` carries in its protocol's envelope; None when it carries none."""
    if response.mimetype == "text/html":
        page = _PAGE_MESSAGE.search(response.get_data(as_text=True))
        return Refusal("web", str(response.status_code), html.unescape(page.group(1)), {}) if page else None
    body = response.get_json(silent=True) if response.is_json else None
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("errorCode"), str) and isinstance(body.get("message"), str):
        return Refusal("ard", body["errorCode"], body["message"], {})
    error = body.get("error")
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    if body.get("jsonrpc") == "2.0" and isinstance(error.get("code"), int):
        return Refusal("jsonrpc", str(error["code"]), error["message"], {})
    if isinstance(error.get("code"), int) and isinstance(error.get("status"), str):
        return Refusal("a2a-rest", error["status"], error["message"], {})
    if isinstance(error.get("code"), str) and isinstance(error.get("details"), dict):
        return Refusal("rest", error["code"], error["message"], error["details"])
    return None


def is_client_error(response: Any, refusal: Refusal) -> bool:
    """A 4xx; or, on the JSON-RPC binding, a JSON-RPC error answered with 200 (JSON-RPC 2.0 §5)."""
    return 400 <= response.status_code < 500 or (refusal.protocol == "jsonrpc" and response.status_code == 200)
