"""Card URLs are an agent's identity, so equal URLs must compare equal as strings.

Every way a card URL enters the catalog (registration by URL or by upload, import items, the
CLI through the API) passes here, so a URL the registry would not store is refused here: it is
checked with the validator's own URL rules (`registry.validation.check_url_syntax`), never
repaired. Credentials are refused rather than dropped, so the stored URL is the one given.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from registry.errors import InvalidRequest, InvalidUrl
from registry.validation import UrlProblem, check_url_syntax

_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_card_url(url: str) -> str:
    """Lower-case scheme and host, drop the default port and the fragment.

    Raises InvalidRequest when no URL is given; InvalidUrl when it is not an absolute http(s)
    URL: whitespace or control characters anywhere, credentials (`user:pw@`), an invalid host or
    port, a template placeholder such as `<AGENT_HOST>`.
    """
    if not isinstance(url, str) or not url.strip():
        raise InvalidRequest("a URL is required, e.g. https://agent.example.com")
    checked = check_url_syntax(url)
    if isinstance(checked, UrlProblem):
        raise InvalidUrl(f"{url!r} is not a usable card URL: {checked.reason}", {"rule": checked.rule})
    if checked.scheme not in _DEFAULT_PORTS:
        raise InvalidUrl(
            f"{url!r} is not an http(s) URL; a card is fetched over https (or http where the registry allows it)",
            {"rule": "url-scheme"},
        )
    host = checked.host.lower()
    if ":" in host:
        host = f"[{host}]"
    port = checked.port
    netloc = host if port in (None, _DEFAULT_PORTS[checked.scheme]) else f"{host}:{port}"
    parts = urlsplit(url)  # cannot fail: the URL passed the stricter check above
    return urlunsplit((checked.scheme, netloc, parts.path or "/", parts.query, ""))
