"""What every web response carries: a Content-Security-Policy that allows only this registry's own
stylesheet and script (no inline code: card text cannot become script), no MIME sniffing, no
referrer leaked to the sites that cards link to. Card links go through `registry.web.links`."""

from __future__ import annotations

from flask import Response

from registry.web.blueprint import bp
from registry.web.links import card_link

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def protect(response: Response) -> Response:
    """`response` with the web pages' security headers."""
    response.headers.update(SECURITY_HEADERS)
    return response


bp.after_request(protect)
bp.add_app_template_filter(card_link, "card_link")
