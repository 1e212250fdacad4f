"""Key resolution as policy: where the key for a signature's `kid` may come from.

A resolver yields `KeyLookup`s lazily, one per key source it consults, so the verifier can
stop at the first source whose key verifies and a chain never fetches what it does not need.
Sources: pinned keys (`StaticKeyResolver`), JWKS URLs (`JwksUrlResolver`: pinned URLs, and
`jku` only when its origin is allowed), and `ChainResolver` to consult several in order.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from signing.errors import KeyFormatError, KeyResolutionError, PolicyError
from signing.fetch import JwksFetcher, RequestsJwksFetcher, UnsafeHttpLoopback, check_url, origin_of
from signing.key_files import KeySet, parse_jwks
from signing.keys import VerificationKey


@dataclass(frozen=True)
class KeyLookup:
    """What one key source offers for a kid: candidate keys, keys it holds for that kid but
    refuses to use (and why: weak, wrong use, malformed), and problems reaching the source."""

    source: str
    keys: tuple[VerificationKey, ...]
    rejected: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


class KeyResolver(Protocol):
    """Finds candidate keys for a signature. Must not raise for "not found" or fetch failures:
    it yields lookups with no keys and a problem instead."""

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        """Lookups in the order the sources should be tried."""
        ...


class StaticKeyResolver:
    """Pinned keys (a trust store): keys by kid, anonymous keys for any kid. Never uses `jku`."""

    def __init__(self, keys: KeySet | Iterable[VerificationKey], source: str = "pinned") -> None:
        self._keys = keys if isinstance(keys, KeySet) else KeySet(tuple(keys))
        self.source = source

    @classmethod
    def from_jwks(cls, document: Mapping[str, Any] | bytes | str, source: str = "pinned-jwks") -> StaticKeyResolver:
        """Pin the keys of a JWKS document. Raises KeyFormatError if it is not a JWKS."""
        return cls(parse_jwks(document), source)

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        """One lookup over the pinned keys."""
        yield KeyLookup(self.source, tuple(self._keys.select(kid)), tuple(self._keys.rejections(kid)))


class ChainResolver:
    """Consults resolvers in order (e.g. pinned keys, the registry's keys, then JWKS URLs)."""

    def __init__(self, resolvers: Iterable[KeyResolver]) -> None:
        self.resolvers = tuple(resolvers)

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        """Every resolver's lookups, in order."""
        for resolver in self.resolvers:
            yield from resolver.resolve(kid, jku)


@dataclass
class _CachedJwks:
    keys: KeySet | None
    error: str | None
    fetched_at: float


class JwksUrlResolver:
    """Keys from JWKS documents over https: `urls` are always consulted; a signature's `jku` only
    when its origin is in `allowed_origins`. Documents are cached for `ttl` seconds; an unknown
    kid triggers one refetch, at most every `min_refresh` seconds (failures are cached as long).

    Raises PolicyError/UnsafeUrlError at construction for non-https URLs or origins (http on
    loopback only with `unsafe=UnsafeHttpLoopback()`).
    """

    def __init__(
        self,
        urls: Iterable[str] = (),
        *,
        allowed_origins: Iterable[str] = (),
        fetcher: JwksFetcher | None = None,
        ttl: float = 300.0,
        min_refresh: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        unsafe: UnsafeHttpLoopback | None = None,
    ) -> None:
        self._unsafe = unsafe
        self._urls = tuple(check_url(url, unsafe) for url in urls)
        self._origins = frozenset(self._checked_origin(origin) for origin in allowed_origins)
        self._fetch = fetcher or RequestsJwksFetcher()
        self._ttl, self._min_refresh, self._clock = ttl, min_refresh, clock
        self._cache: dict[str, _CachedJwks] = {}
        self._lock = threading.Lock()

    def _checked_origin(self, origin: str) -> str:
        parts = urllib.parse.urlsplit(check_url(origin, self._unsafe))
        if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
            raise PolicyError(f"{origin!r} is not an origin (scheme://host[:port], nothing after)")
        return origin_of(origin)

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        """A lookup per pinned URL, then one for `jku` (or why it was not fetched)."""
        for url in self._urls:
            yield self._lookup(url, kid)
        if jku is not None and jku not in self._urls:
            refusal = self._jku_refusal(jku)
            yield KeyLookup(f"jku:{jku}", (), problems=(refusal,)) if refusal else self._lookup(jku, kid)

    def _jku_refusal(self, jku: str) -> str | None:
        try:
            check_url(jku, self._unsafe)
            allowed = origin_of(jku) in self._origins
        except PolicyError as error:
            return f"jku not fetched: {error}"
        return None if allowed else f"jku {jku} not fetched: its origin is not an allowed origin"

    def _lookup(self, url: str, kid: str | None) -> KeyLookup:
        entry = self._entry(url, refresh=False)
        if entry.keys is not None and kid is not None and not entry.keys.select(kid):
            entry = self._entry(url, refresh=True)  # rotated keys: refetch once for an unknown kid
        if entry.keys is None:
            return KeyLookup(f"jwks:{url}", (), problems=(entry.error or "JWKS unavailable",))
        return KeyLookup(f"jwks:{url}", tuple(entry.keys.select(kid)), tuple(entry.keys.rejections(kid)))

    def _entry(self, url: str, *, refresh: bool) -> _CachedJwks:
        now = self._clock()
        with self._lock:
            entry = self._cache.get(url)
        fresh_for = self._min_refresh if refresh or (entry and entry.error) else self._ttl
        if entry is not None and now - entry.fetched_at < fresh_for:
            return entry
        entry = self._download(url, now)
        with self._lock:
            self._cache[url] = entry
        return entry

    def _download(self, url: str, now: float) -> _CachedJwks:
        try:
            return _CachedJwks(parse_jwks(self._fetch(url)), None, now)
        except (KeyResolutionError, KeyFormatError) as error:
            return _CachedJwks(None, str(error), now)
        except Exception as error:  # an injected fetcher broke its contract: record, never crash
            return _CachedJwks(None, f"JWKS {url} could not be fetched: {type(error).__name__}: {error}", now)
