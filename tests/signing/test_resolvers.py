"""Key resolution over real HTTP on loopback: https by default, `jku` only from allowed origins,
caching with a TTL and one refetch for an unknown kid (at most once a minute), empty sets never
cached, the last good set kept when a fetch fails, failures reported, never raised."""

from __future__ import annotations

import json
from typing import Any

import pytest

from signing import (
    JwksCache,
    JwksFetchError,
    JwksUrlResolver,
    Outcome,
    PolicyError,
    RequestsJwksFetcher,
    SigningKey,
    UnsafeHttpAnyHost,
    UnsafeHttpLoopback,
    UnsafeUrlError,
    public_jwks,
    sign_card,
    verify_card,
)
from tests.signing.cards import rich_card
from tests.support.servers import CardServer

UNSAFE = UnsafeHttpLoopback()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def jwks_requests(server: CardServer, path: str = "/jwks.json") -> int:
    return sum(1 for seen, _ in server.requests if seen == path)


def test_pinned_jwks_url_on_loopback_verifies(card_server: CardServer, keys: dict[str, SigningKey]) -> None:
    url = card_server.serve_json("/jwks.json", public_jwks([keys["ES256"]]))
    result = verify_card(sign_card(rich_card(1), keys["ES256"]), JwksUrlResolver([url], unsafe=UNSAFE))
    assert result.ok and result.signatures[0].key_source == f"jwks:{url}"
    assert dict(card_server.requests[0][1])["Accept"].startswith("application/jwk-set+json")


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/jwks.json", "http://example.com/jwks.json", "ftp://x/y"])
def test_http_is_refused_unless_explicitly_unsafe_on_loopback(url: str) -> None:
    with pytest.raises((UnsafeUrlError, PolicyError)):
        JwksUrlResolver([url])
    if "example.com" in url or "ftp" in url:
        with pytest.raises((UnsafeUrlError, PolicyError)):
            JwksUrlResolver([url], unsafe=UNSAFE)


@pytest.mark.parametrize("origin", ["https://a.example/path", "http://a.example", "not an origin"])
def test_allowed_origins_must_be_https_origins(origin: str) -> None:
    with pytest.raises(PolicyError):
        JwksUrlResolver(allowed_origins=[origin])


def test_jku_is_followed_only_from_an_allowed_origin(card_server: CardServer, keys: dict[str, SigningKey]) -> None:
    url = card_server.serve_json("/jwks.json", public_jwks([keys["EdDSA"]]))
    signed = sign_card(rich_card(1), keys["EdDSA"], jku=url)
    refused = verify_card(signed, JwksUrlResolver(allowed_origins=["https://agent.example"], unsafe=UNSAFE))
    assert (
        refused.signatures[0].outcome is Outcome.KEY_NOT_FOUND
        and "not an allowed origin" in refused.signatures[0].detail
    )
    assert jwks_requests(card_server) == 0
    default = verify_card(signed, JwksUrlResolver(allowed_origins=["https://agent.example"]))
    assert "not https" in default.signatures[0].detail and jwks_requests(card_server) == 0
    followed = verify_card(signed, JwksUrlResolver(allowed_origins=[card_server.base_url], unsafe=UNSAFE))
    assert followed.ok and jwks_requests(card_server) == 1


def test_jwks_is_cached_and_refetched_once_for_an_unknown_kid(
    card_server: CardServer, keys: dict[str, SigningKey]
) -> None:
    old, new = keys["EdDSA"], keys["ES256"]
    url = card_server.serve_json("/jwks.json", public_jwks([old]))
    clock = Clock()
    resolver = JwksUrlResolver([url], ttl=300, min_refresh=30, clock=clock, unsafe=UNSAFE)
    for _ in range(3):
        assert verify_card(sign_card(rich_card(1), old), resolver).ok
    assert jwks_requests(card_server) == 1
    card_server.serve_json("/jwks.json", public_jwks([old, new]))  # the provider rotates keys
    clock.now += 31
    assert verify_card(sign_card(rich_card(1), new), resolver).ok  # unknown kid: one refetch
    assert jwks_requests(card_server) == 2
    unknown = sign_card(rich_card(1), keys["ES384"])
    for _ in range(3):
        assert verify_card(unknown, resolver).signatures[0].outcome is Outcome.KEY_NOT_FOUND
    assert jwks_requests(card_server) == 2  # refetches for unknown kids are rate-limited
    clock.now += 301
    verify_card(sign_card(rich_card(1), old), resolver)
    assert jwks_requests(card_server) == 3  # TTL expired


@pytest.mark.parametrize(
    "status,body,needle",
    [
        (404, b"{}", "HTTP 404"),
        (302, b"", "HTTP 302"),
        (200, b"not json", "neither PEM nor JSON"),
        (200, b'{"no": "keys"}', '"keys" list'),
        (200, b"x" * 300_000, "larger than"),
    ],
)
def test_fetch_failures_are_key_not_found_with_the_reason(
    card_server: CardServer, keys: dict[str, SigningKey], status: int, body: bytes, needle: str
) -> None:
    url = card_server.serve_raw("/jwks.json", body, status=status, headers={"Location": "https://evil.example/"})
    result = verify_card(sign_card(rich_card(1), keys["EdDSA"]), JwksUrlResolver([url], unsafe=UNSAFE))
    assert result.signatures[0].outcome is Outcome.KEY_NOT_FOUND and needle in result.signatures[0].detail


def test_unreachable_jwks_is_reported_and_the_failure_cached(keys: dict[str, SigningKey]) -> None:
    server = CardServer()
    url = server.url("/jwks.json")
    server.close()
    clock = Clock()
    calls: list[str] = []

    def fetcher(target: str) -> bytes:
        calls.append(target)
        return RequestsJwksFetcher(timeout=1.0)(target)

    resolver = JwksUrlResolver([url], fetcher=fetcher, clock=clock, unsafe=UNSAFE)
    signed = sign_card(rich_card(1), keys["EdDSA"])
    for _ in range(2):
        (signature,) = verify_card(signed, resolver).signatures
        assert signature.outcome is Outcome.KEY_NOT_FOUND and "could not be fetched" in signature.detail
    assert len(calls) == 1


def test_an_injected_fetcher_is_used_and_its_errors_reported(keys: dict[str, SigningKey]) -> None:
    documents: dict[str, Any] = {"https://keys.example/jwks.json": public_jwks([keys["ES256"]])}

    def fetcher(url: str) -> bytes:
        if url not in documents:
            raise JwksFetchError(f"no route to {url}")
        return json.dumps(documents[url]).encode()

    signed = sign_card(rich_card(1), keys["ES256"], jku="https://keys.example/jwks.json")
    assert verify_card(signed, JwksUrlResolver(allowed_origins=["https://keys.example"], fetcher=fetcher)).ok
    broken = JwksUrlResolver(["https://down.example/jwks.json"], fetcher=fetcher)
    assert "no route" in verify_card(signed, broken).signatures[0].detail

    def buggy(url: str) -> bytes:
        raise RuntimeError("bug in an injected fetcher")

    (signature,) = verify_card(signed, JwksUrlResolver(["https://a.example/j"], fetcher=buggy)).signatures
    assert signature.outcome is Outcome.KEY_NOT_FOUND and "RuntimeError" in signature.detail


def test_an_empty_jwks_is_never_cached_and_a_failed_fetch_keeps_the_last_good_set(
    card_server: CardServer, keys: dict[str, SigningKey]
) -> None:
    key = keys["EdDSA"]
    url = card_server.serve_json("/jwks.json", {"keys": []})
    clock = Clock()
    cache = JwksCache(RequestsJwksFetcher(timeout=2.0), ttl=300, min_refresh=60, clock=clock)
    resolver = JwksUrlResolver([url], cache=cache, unsafe=UNSAFE)
    signed = sign_card(rich_card(1), key)
    (signature,) = verify_card(signed, resolver).signatures
    assert signature.outcome is Outcome.KEY_NOT_FOUND and "no usable key" in signature.detail
    card_server.serve_json("/jwks.json", public_jwks([key]))
    clock.now += 61  # the empty answer was a failure: retried after min_refresh, not after the TTL
    assert verify_card(signed, resolver).ok
    for broken in ({"keys": []}, "down"):
        if broken == "down":
            card_server.serve_raw("/jwks.json", b"oops", status=503)
        else:
            card_server.serve_json("/jwks.json", broken)
        clock.now += 301  # TTL over: refetched, the answer is unusable, the last good set stays
        assert verify_card(signed, resolver).ok
    assert jwks_requests(card_server) == 4


def test_refetches_for_unknown_kids_happen_at_most_once_a_minute(
    card_server: CardServer, keys: dict[str, SigningKey]
) -> None:
    url = card_server.serve_json("/jwks.json", public_jwks([keys["EdDSA"]]))
    clock = Clock()
    resolver = JwksUrlResolver([url], cache=JwksCache(RequestsJwksFetcher(timeout=2.0), clock=clock), unsafe=UNSAFE)
    unknown = sign_card(rich_card(1), keys["ES256"])
    for step in (0, 30, 29):
        clock.now += step
        assert verify_card(unknown, resolver).signatures[0].outcome is Outcome.KEY_NOT_FOUND
    assert jwks_requests(card_server) == 1  # fetched just now: an unknown kid waits a minute
    clock.now += 2  # 61 s after the fetch
    card_server.serve_json("/jwks.json", public_jwks([keys["EdDSA"], keys["ES256"]]))
    assert verify_card(unknown, resolver).ok and jwks_requests(card_server) == 2


def test_resolvers_share_a_cache(card_server: CardServer, keys: dict[str, SigningKey]) -> None:
    url = card_server.serve_json("/jwks.json", public_jwks([keys["ES256"]]))
    cache = JwksCache(RequestsJwksFetcher(timeout=2.0))
    signed = sign_card(rich_card(1), keys["ES256"], jku=url)
    for _ in range(3):  # one resolver per card policy (its own allowed origins), one cache
        assert verify_card(
            signed, JwksUrlResolver(allowed_origins=[card_server.base_url], cache=cache, unsafe=UNSAFE)
        ).ok
    assert jwks_requests(card_server) == 1


def test_plain_http_to_any_host_only_under_the_explicit_option() -> None:
    with pytest.raises(UnsafeUrlError):
        JwksUrlResolver(["http://keys.example/jwks.json"], unsafe=UNSAFE)
    resolver = JwksUrlResolver(
        ["http://keys.example/jwks.json"],
        allowed_origins=["http://keys.example"],
        unsafe=UnsafeHttpAnyHost(),
        fetcher=lambda url: b'{"keys": []}',
    )
    (lookup,) = resolver.resolve("k", None)
    assert "no usable key" in lookup.problems[0]
