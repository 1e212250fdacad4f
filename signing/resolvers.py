"""Key resolution as policy: where the key for a signature's `kid` may come from.

A resolver yields `KeyLookup`s lazily, one per key source it consults, so the verifier can
stop at the first source whose key verifies and a chain never fetches what it does not need.
Sources: pinned keys (`StaticKeyResolver`), JWKS URLs (`JwksUrlResolver`: pinned URLs, and
`jku` only when its origin is allowed, fetched through a `JwksCache` that several resolvers may
share), and `ChainResolver` to consult several in order.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from signing.errors import KeyFormatError, KeyResolutionError, PolicyError
from signing.fetch import JwksFetcher, RequestsJwksFetcher, UnsafeHttp, check_url, origin_of
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


@dataclass(frozen=True)
class _CachedJwks:
    keys: KeySet | None  # the last good set: never empty, kept when a later fetch fails
    error: str | None  # why the last attempt failed; None when it succeeded
    fetched_at: float  # when `keys` were fetched (meaningless while `keys` is None)
    attempted_at: float


class JwksCache:
    """JWKS documents by URL, shared by every resolver that consults them (one per card policy).

    Rules: a good set is reused for `ttl` seconds; an unknown kid triggers a refetch at most
    every `min_refresh` seconds; a document with no usable key is a failure and never replaces
    (or becomes) the cached set; a failed fetch keeps the last good set and is retried after
    `min_refresh`. Concurrent misses on one URL fetch it once. At most `max_urls` URLs are kept.
    """

    def __init__(
        self,
        fetcher: JwksFetcher | None = None,
        *,
        ttl: float = 300.0,
        min_refresh: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_urls: int = 10_000,
    ) -> None:
        self._fetch = fetcher or RequestsJwksFetcher()
        self._ttl, self._min_refresh, self._clock, self._max_urls = ttl, min_refresh, clock, max_urls
        self._cache: dict[str, _CachedJwks] = {}
        self._lock = threading.Lock()
        self._url_locks: dict[str, threading.Lock] = {}

    def lookup(self, url: str, kid: str | None) -> KeyLookup:
        """The keys `url` publishes under `kid` (refetched once if the kid is unknown)."""
        entry = self._entry(url, refresh=False)
        if entry.keys is not None and kid is not None and not entry.keys.select(kid):
            entry = self._entry(url, refresh=True)  # rotated keys: refetch for an unknown kid
        if entry.keys is None:
            return KeyLookup(f"jwks:{url}", (), problems=(entry.error or "JWKS unavailable",))
        problems = (entry.error,) if entry.error and not entry.keys.select(kid) else ()
        return KeyLookup(f"jwks:{url}", tuple(entry.keys.select(kid)), tuple(entry.keys.rejections(kid)), problems)

    def _entry(self, url: str, *, refresh: bool) -> _CachedJwks:
        entry = self._cache.get(url)
        if entry is not None and not self._due(entry, refresh):
            return entry
        with self._url_lock(url):
            entry = self._cache.get(url)  # another thread may have fetched it meanwhile
            if entry is not None and not self._due(entry, refresh):
                return entry
            entry = self._download(url, entry, self._clock())
            with self._lock:
                self._cache.pop(url, None)
                self._cache[url] = entry
                while len(self._cache) > self._max_urls:
                    self._cache.pop(next(iter(self._cache)))
        return entry

    def _due(self, entry: _CachedJwks, refresh: bool) -> bool:
        now = self._clock()
        if entry.keys is None or entry.error is not None or refresh:
            return now - entry.attempted_at >= self._min_refresh
        return now - entry.fetched_at >= self._ttl

    def _url_lock(self, url: str) -> threading.Lock:
        with self._lock:
            if len(self._url_locks) > self._max_urls:
                self._url_locks.clear()  # only idle locks are dropped in practice; a race costs one extra fetch
            return self._url_locks.setdefault(url, threading.Lock())

    def _download(self, url: str, previous: _CachedJwks | None, now: float) -> _CachedJwks:
        try:
            keys = parse_jwks(self._fetch(url))
            if keys.keys:
                return _CachedJwks(keys, None, now, now)
            reasons = "; ".join(r.reason for r in keys.rejected)
            error = f"JWKS {url} has no usable key" + (f" ({reasons})" if reasons else "")
        except (KeyResolutionError, KeyFormatError) as failure:
            error = str(failure)
        except Exception as failure:  # an injected fetcher broke its contract: record, never crash
            error = f"JWKS {url} could not be fetched: {type(failure).__name__}: {failure}"
        if previous is not None and previous.keys is not None:
            return _CachedJwks(previous.keys, error, previous.fetched_at, now)
        return _CachedJwks(None, error, now, now)


class JwksUrlResolver:
    """Keys from JWKS documents over https: `urls` are always consulted; a signature's `jku` only
    when its origin is in `allowed_origins`. Documents come from `cache` (see `JwksCache` for the
    caching rules); without one, a private cache is built from `fetcher`, `ttl`, `min_refresh`
    and `clock`.

    Raises PolicyError/UnsafeUrlError at construction for non-https URLs or origins (plain http
    only under an explicit `unsafe` option: `UnsafeHttpLoopback` or `UnsafeHttpAnyHost`).
    """

    def __init__(
        self,
        urls: Iterable[str] = (),
        *,
        allowed_origins: Iterable[str] = (),
        fetcher: JwksFetcher | None = None,
        ttl: float = 300.0,
        min_refresh: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        unsafe: UnsafeHttp | None = None,
        cache: JwksCache | None = None,
    ) -> None:
        self._unsafe = unsafe
        self._urls = tuple(check_url(url, unsafe) for url in urls)
        self._origins = frozenset(self._checked_origin(origin) for origin in allowed_origins)
        self._cache = cache or JwksCache(fetcher, ttl=ttl, min_refresh=min_refresh, clock=clock)

    def _checked_origin(self, origin: str) -> str:
        parts = urllib.parse.urlsplit(check_url(origin, self._unsafe))
        if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
            raise PolicyError(f"{origin!r} is not an origin (scheme://host[:port], nothing after)")
        return origin_of(origin)

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        """A lookup per pinned URL, then one for `jku` (or why it was not fetched)."""
        for url in self._urls:
            yield self._cache.lookup(url, kid)
        if jku is not None and jku not in self._urls:
            refusal = self._jku_refusal(jku)
            yield KeyLookup(f"jku:{jku}", (), problems=(refusal,)) if refusal else self._cache.lookup(jku, kid)

    def _jku_refusal(self, jku: str) -> str | None:
        try:
            check_url(jku, self._unsafe)
            allowed = origin_of(jku) in self._origins
        except PolicyError as error:
            return f"jku not fetched: {error}"
        return None if allowed else f"jku {jku} not fetched: its origin is not an allowed origin"
