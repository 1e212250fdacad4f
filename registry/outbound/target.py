"""Parsing and checking what a request is aimed at: the URL and the header fields."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

import idna

from registry.outbound.addresses import IPAddress
from registry.outbound.errors import OutboundInvalidUrl, OutboundRefused

DEFAULT_PORTS = {"http": 80, "https": 443}

# RFC 9110 §5.6.2 token characters, for methods and field names.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HOST_LABELS = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$")
# Characters left alone when re-quoting a path or query: reserved ones and '%'.
_URL_SAFE = "/?#[]@!$&'()*+,;=:%-._~"
# The client frames the message itself; a caller-supplied value could smuggle a second one.
_FRAMING_FIELDS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


@dataclass(frozen=True)
class Target:
    """One hop's destination: scheme, ASCII host, port and request-target (path + query)."""

    scheme: str
    host: str
    port: int
    request_target: str
    literal_ip: IPAddress | None = None  # set when the host is an IP address literal

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.authority}{self.request_target}"


def parse_target(url: str) -> Target:
    """Parse an absolute http(s) URL; the fragment is dropped.

    Raises OutboundInvalidUrl for anything else, for URLs with credentials, whitespace or
    control characters, bad ports and host names that are not valid (IDNA) names.
    """
    if not isinstance(url, str) or any(c <= " " or c == "\x7f" for c in url):
        raise OutboundInvalidUrl(f"{url!r} is not a valid URL (empty, or contains whitespace)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise OutboundInvalidUrl(f"{url!r} is not a valid URL: {error}", url=url) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise OutboundInvalidUrl(f"{url!r} is not an http(s) URL", url=url)
    if "@" in parts.netloc:
        raise OutboundInvalidUrl(f"{url!r} carries credentials; they are not allowed", url=url)
    if not parts.hostname:
        raise OutboundInvalidUrl(f"{url!r} has no host", url=url)
    if port == 0:
        raise OutboundInvalidUrl(f"{url!r} has port 0", url=url)
    path = quote(parts.path or "/", safe=_URL_SAFE)
    query = quote(parts.query, safe=_URL_SAFE)
    request_target = urlunsplit(("", "", path, query, ""))
    host, literal_ip = _ascii_host(parts.hostname, url)
    return Target(scheme, host, port or DEFAULT_PORTS[scheme], request_target, literal_ip)


def _ascii_host(host: str, url: str) -> tuple[str, IPAddress | None]:
    try:
        literal_ip = ipaddress.ip_address(host)
        return str(literal_ip), literal_ip
    except ValueError:
        pass
    try:
        ascii_host = host if host.isascii() else idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as error:
        raise OutboundInvalidUrl(f"{host!r} is not a valid host name: {error}", url=url) from None
    ascii_host = ascii_host.lower()
    if not _HOST_LABELS.match(ascii_host):
        raise OutboundInvalidUrl(f"{host!r} is not a valid host name", url=url)
    return ascii_host, None


def check_method(method: str) -> str:
    """The method, upper-cased. Raises OutboundRefused when it is not an HTTP token."""
    if not isinstance(method, str) or not _TOKEN.match(method):
        raise OutboundRefused(f"{method!r} is not a valid HTTP method")
    return method.upper()


def check_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``headers`` after checking each field.

    Raises OutboundRefused for names that are not tokens, values holding CR, LF or NUL
    (header injection), and fields the client sets itself (Host, Content-Length, …).
    """
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise OutboundRefused(f"header name {name!r} is not a valid HTTP field name")
        if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
            raise OutboundRefused(f"header {name} has a value with CR, LF or NUL; refused")
        if name.lower() in _FRAMING_FIELDS:
            raise OutboundRefused(f"header {name} is set by the client and cannot be supplied")
        checked[name] = value
    return checked
