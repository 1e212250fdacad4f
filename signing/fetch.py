"""Getting JWKS documents over HTTP: the fetcher seam and the URL policy.

Verification never fetches "whatever `jku` says": a URL is fetched only if it is https and
pinned or on an allowed origin (see `JwksUrlResolver`). Plain http is possible only through an
explicitly unsafe option: `UnsafeHttpLoopback` (loopback addresses, for tests) or
`UnsafeHttpAnyHost` (for a fetcher that enforces its own address policy, e.g. a server whose
operator allowed http on allowlisted networks).
The fetcher is injected; a server should pass its own hardened client (address policy,
pinned DNS), the default here is a plain `requests` GET with timeouts and a size cap.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import dataclass
from typing import Protocol

from signing.errors import JwksFetchError, PolicyError, UnsafeUrlError

MAX_JWKS_BYTES = 256 * 1024
_DEFAULT_PORTS = {"https": 443, "http": 80}


class JwksFetcher(Protocol):
    """Anything that turns a URL into the bytes of a JWKS document."""

    def __call__(self, url: str) -> bytes:
        """The response body. Raises JwksFetchError on any failure."""
        ...


@dataclass(frozen=True)
class UnsafeHttpLoopback:
    """Allow plain http to 127.0.0.0/8, ::1 and localhost. For tests only: never in production."""


@dataclass(frozen=True)
class UnsafeHttpAnyHost:
    """Allow plain http to any host. Only with a fetcher that enforces its own address policy
    (private networks refused unless allowlisted) and only where an operator chose plain http."""


UnsafeHttp = UnsafeHttpLoopback | UnsafeHttpAnyHost


@dataclass(frozen=True)
class RequestsJwksFetcher:
    """GET with `requests`: no redirects, connect/read timeouts, at most `max_bytes`, status 200."""

    timeout: float = 5.0
    max_bytes: int = MAX_JWKS_BYTES
    user_agent: str = "agentdex-signing (+https://a2a-protocol.org)"

    def __call__(self, url: str) -> bytes:
        """The body of `url`. Raises JwksFetchError (network error, non-200, oversized body)."""
        import requests  # here, not at the top: offline commands that never fetch start faster

        headers = {"Accept": "application/jwk-set+json, application/json", "User-Agent": self.user_agent}
        try:
            with requests.get(
                url, headers=headers, timeout=self.timeout, allow_redirects=False, stream=True
            ) as response:
                if response.status_code != 200:
                    raise JwksFetchError(f"JWKS {url} answered HTTP {response.status_code}")
                body = response.raw.read(self.max_bytes + 1, decode_content=True)
        except requests.RequestException as error:
            raise JwksFetchError(f"JWKS {url} could not be fetched: {error}") from error
        if len(body) > self.max_bytes:
            raise JwksFetchError(f"JWKS {url} is larger than {self.max_bytes} bytes")
        return body


def origin_of(url: str) -> str:
    """The RFC 6454 origin `scheme://host[:port]` of an absolute URL (default port dropped).

    Raises PolicyError if `url` is not an absolute http(s) URL.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise PolicyError(f"{url!r} is not a valid URL: {error}") from error
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise PolicyError(f"{url!r} is not an absolute http(s) URL")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    suffix = f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else ""
    return f"{scheme}://{host}{suffix}"


def check_url(url: str, unsafe: UnsafeHttp | None = None) -> str:
    """`url` if it may be fetched for keys: https; http to loopback under `UnsafeHttpLoopback`,
    to any host under `UnsafeHttpAnyHost`.

    Raises UnsafeUrlError (plain http elsewhere) or PolicyError (not a URL).
    """
    origin = origin_of(url)
    if origin.startswith("https://"):
        return url
    if isinstance(unsafe, UnsafeHttpAnyHost):
        return url
    if unsafe is not None and _is_loopback(urllib.parse.urlsplit(url).hostname or ""):
        return url
    raise UnsafeUrlError(f"{url} is not https; keys are only fetched over https")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
