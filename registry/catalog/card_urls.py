"""Card URLs are an agent's identity, so equal URLs must compare equal as strings."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from registry.errors import InvalidRequest

_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_card_url(url: str) -> str:
    """Lower-case scheme and host, drop the default port and the fragment.

    Raises InvalidRequest when the URL is not an absolute http(s) URL.
    """
    if not isinstance(url, str) or not url.strip():
        raise InvalidRequest("a URL is required, e.g. https://agent.example.com")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise InvalidRequest(f"{url!r} is not a valid URL: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise InvalidRequest(f"{url!r} is not an absolute http(s) URL")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
