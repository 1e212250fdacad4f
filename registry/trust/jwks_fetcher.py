"""JWKS documents over the registry's safe outbound client (a `signing.JwksFetcher`).

The address policy, DNS pinning, size cap and deadline of `SafeHttpClient` apply to every key
fetch. Redirects are not followed: a JWKS URL is trusted for its origin (the card's own, or one
the operator allowlisted), and a redirect could move the fetch to any other origin.
"""

from __future__ import annotations

from registry.outbound import OutboundError, SafeHttpClient
from signing import JwksFetchError

ACCEPT = "application/jwk-set+json, application/json;q=0.9"


class SafeJwksFetcher:
    def __init__(self, http: SafeHttpClient, *, max_bytes: int, timeout: float) -> None:
        self._http = http
        self._max_bytes = max_bytes
        self._timeout = timeout

    def __call__(self, url: str) -> bytes:
        """The body of `url`. Raises JwksFetchError (refused, timeout, too large, not HTTP 200)."""
        try:
            response = self._http.get(
                url, headers={"Accept": ACCEPT}, max_bytes=self._max_bytes, timeout=self._timeout,
                follow_redirects=False,
            )
        except OutboundError as error:
            raise JwksFetchError(f"JWKS {url} could not be fetched: {error}") from error
        if 300 <= response.status < 400:
            raise JwksFetchError(f"JWKS {url} answered HTTP {response.status} (a redirect); keys are never fetched elsewhere")
        if response.status != 200:
            raise JwksFetchError(f"JWKS {url} answered HTTP {response.status}")
        return response.body
