"""Card discovery and conditional re-fetches against real loopback servers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.catalog.fetcher import (
    AgentTimeout,
    AgentUnreachable,
    CardFetcher,
    CardNotFound,
    CardNotJson,
    CardTooLarge,
    FetchedCard,
    NotModified,
    card_candidates,
    parse_max_age,
)
from registry.outbound import OutboundInvalidUrl, OutboundPolicy, OutboundRefused, SafeHttpClient
from tests.registry.outbound.loopback import (
    Exchange,
    LoopbackServer,
    Route,
    Servers,
    closed_port,
    loopback_policy,
    servers_fixture,
)

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
CARD = {"name": "Echo", "protocolVersion": "0.3.0", "url": "https://echo.example/a2a", "skills": []}


def serve(document: object, content_type: str = "application/json", headers: dict[str, str] | None = None) -> Route:
    body = document if isinstance(document, bytes) else json.dumps(document).encode()
    return lambda exchange: exchange.reply(200, body, {"Content-Type": content_type, **(headers or {})})


@pytest.fixture
def servers() -> Iterator[Servers]:
    yield from servers_fixture()


@pytest.fixture
def client() -> Iterator[SafeHttpClient]:
    with SafeHttpClient(loopback_policy(read_timeout=0.3, total_timeout=1.0)) as client:
        yield client


@pytest.fixture
def fetcher(client: SafeHttpClient) -> CardFetcher:
    return CardFetcher(client, max_card_bytes=4096, clock=lambda: NOW)


def test_discovery_tries_agent_card_json_first(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start(
        {"/.well-known/agent-card.json": serve(CARD), "/.well-known/agent.json": serve({"name": "old"})}
    )
    fetched = fetcher.discover(server.url("/"))
    assert fetched == FetchedCard(
        card_url=server.url("/.well-known/agent-card.json"),
        body=json.dumps(CARD).encode(),
        card=CARD,
        etag=None,
        last_modified=None,
        max_age=None,
        fetched_at=NOW,
    )
    assert server.paths() == ["/.well-known/agent-card.json"]
    assert "application/a2a+json" in server.seen[0].headers["accept"]


def test_discovery_falls_back_to_agent_json_for_pre_0_3_agents(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/.well-known/agent.json": serve(CARD)})
    fetched = fetcher.discover(server.url(""))
    assert fetched.card_url == server.url("/.well-known/agent.json")
    assert server.paths() == ["/.well-known/agent-card.json", "/.well-known/agent.json"]


def test_a_base_url_with_a_path_looks_under_the_path_then_at_the_root(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/agents/echo/.well-known/agent-card.json": serve(CARD)})
    assert fetcher.discover(server.url("/agents/echo/")).card == CARD
    server.routes = {"/.well-known/agent.json": serve(CARD)}
    server.seen.clear()
    assert fetcher.discover(server.url("/a2a/jsonrpc?x=1#frag")).card == CARD
    assert server.paths() == [
        "/a2a/jsonrpc/.well-known/agent-card.json",
        "/a2a/jsonrpc/.well-known/agent.json",
        "/.well-known/agent-card.json",
        "/.well-known/agent.json",
    ]


def test_an_exact_card_url_is_fetched_as_is(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/cards/echo.json": serve(CARD)})
    assert fetcher.discover(server.url("/cards/echo.json?v=2")).card == CARD
    assert server.paths() == ["/cards/echo.json?v=2"]


def test_404_everywhere_lists_every_url_tried(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start()
    with pytest.raises(CardNotFound) as caught:
        fetcher.discover(server.url("/agent"))
    tried = caught.value.tried
    assert tried == tuple(card_candidates(server.url("/agent"))) and len(tried) == 6  # 4 well-known, 2 /agentCard
    assert all(url in str(caught.value) for url in tried)


def test_a_catch_all_html_page_does_not_hide_the_fallback(servers: Servers, fetcher: CardFetcher) -> None:
    html = serve(b"<!doctype html><title>app</title>", "text/html")
    server = servers.start({"/.well-known/agent-card.json": html, "/.well-known/agent.json": serve(CARD)})
    assert fetcher.discover(server.url("/")).card == CARD


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"<!doctype html>", "did not return JSON"), (b"[1, 2]", "an array"), (b'"card"', "a string"), (b"", "JSON")],
)
def test_bodies_that_are_not_a_json_object_are_rejected(
    body: bytes, message: str, servers: Servers, fetcher: CardFetcher
) -> None:
    server = servers.start({"/card.json": serve(body, "text/html")})
    with pytest.raises(CardNotJson, match=message):
        fetcher.discover(server.url("/card.json"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"name": "Evil", "name": "Echo", "skills": []}', "more than once"),
        (b'{"name": "Echo\\ud800", "skills": []}', "surrogate"),
        (b"[" * 1025 + b"]" * 1025, "deep"),
        (b'{"name": "Echo", "version": NaN}', "NaN"),
    ],
    ids=["duplicate name", "lone surrogate", "1,025 levels", "NaN"],
)
def test_a_fetched_card_is_read_as_strictly_as_a_pushed_one(
    body: bytes, message: str, servers: Servers, fetcher: CardFetcher
) -> None:
    server = servers.start({"/card.json": serve(body)})
    with pytest.raises(CardNotJson, match=message):
        fetcher.discover(server.url("/card.json"))


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/a2a+json", "text/plain", "application/octet-stream"]
)
def test_any_json_object_is_accepted_whatever_the_content_type(
    content_type: str, servers: Servers, fetcher: CardFetcher
) -> None:
    server = servers.start({"/card.json": serve(CARD, content_type)})
    assert fetcher.discover(server.url("/card.json")).card == CARD


def test_a_card_over_the_limit_is_too_large(servers: Servers, fetcher: CardFetcher) -> None:
    big = {**CARD, "description": "x" * 5000}
    server = servers.start({"/card.json": serve(big)})
    with pytest.raises(CardTooLarge) as caught:
        fetcher.discover(server.url("/card.json"))
    assert caught.value.limit == 4096


def test_refetch_with_etag_gets_not_modified(servers: Servers, fetcher: CardFetcher) -> None:
    def conditional(exchange: Exchange) -> None:
        if exchange.headers.get("If-None-Match") == '"v1"':
            exchange.reply(304, b"", {"ETag": '"v1"', "Cache-Control": "max-age=60"})
        else:
            serve(CARD, headers={"ETag": '"v1"', "Cache-Control": "public, max-age=600"})(exchange)

    server = servers.start({"/card.json": conditional})
    first = fetcher.fetch(server.url("/card.json"))
    assert isinstance(first, FetchedCard)
    assert (first.etag, first.max_age) == ('"v1"', 600)
    again = fetcher.fetch(first.card_url, etag=first.etag)
    assert again == NotModified(card_url=first.card_url, etag='"v1"', last_modified=None, max_age=60, fetched_at=NOW)


def test_refetch_with_last_modified_gets_not_modified(servers: Servers, fetcher: CardFetcher) -> None:
    stamp = "Tue, 15 Nov 1994 12:45:26 GMT"

    def conditional(exchange: Exchange) -> None:
        if exchange.headers.get("If-Modified-Since") == stamp:
            exchange.reply(304)  # a 304 may omit the validators: the fetcher keeps ours
        else:
            serve(CARD, headers={"Last-Modified": stamp})(exchange)

    server = servers.start({"/card.json": conditional})
    first = fetcher.fetch(server.url("/card.json"))
    assert isinstance(first, FetchedCard) and first.last_modified == stamp
    again = fetcher.fetch(first.card_url, last_modified=stamp)
    assert isinstance(again, NotModified) and again.last_modified == stamp and again.max_age is None


def test_a_changed_card_is_fetched_again(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/card.json": serve(CARD, headers={"ETag": '"v2"'})})
    fetched = fetcher.fetch(server.url("/card.json"), etag='"v1"')
    assert isinstance(fetched, FetchedCard) and fetched.etag == '"v2"'
    assert server.seen[0].headers["if-none-match"] == '"v1"'


def test_a_card_that_vanished_is_not_found(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/card.json": lambda exchange: exchange.reply(410)})
    with pytest.raises(CardNotFound):
        fetcher.fetch(server.url("/card.json"))


def test_redirects_report_where_the_card_was_found(servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start(
        {
            "/.well-known/agent-card.json": lambda ex: ex.reply(301, b"", {"Location": "/v2/card.json"}),
            "/v2/card.json": serve(CARD),
        }
    )
    assert fetcher.discover(server.url("/")).card_url == server.url("/v2/card.json")


@pytest.mark.parametrize("status", [500, 503, 403])
def test_error_statuses_make_the_agent_unreachable(status: int, servers: Servers, fetcher: CardFetcher) -> None:
    server = servers.start({"/.well-known/agent-card.json": lambda exchange: exchange.reply(status)})
    with pytest.raises(AgentUnreachable) as caught:
        fetcher.discover(server.url("/"))
    assert caught.value.status == status
    assert server.paths() == ["/.well-known/agent-card.json"]  # no fallback after a real error


def test_a_dead_agent_is_unreachable(fetcher: CardFetcher) -> None:
    with pytest.raises(AgentUnreachable, match="refused") as caught:
        fetcher.discover(f"http://127.0.0.1:{closed_port()}/")
    assert caught.value.status is None


def test_a_hanging_agent_times_out(servers: Servers, fetcher: CardFetcher) -> None:
    server: LoopbackServer = servers.start({"/.well-known/agent-card.json": lambda ex: ex.loopback.released.wait()})
    with pytest.raises(AgentTimeout):
        fetcher.discover(server.url("/"))


def test_policy_refusals_pass_through_for_the_api_to_map(servers: Servers) -> None:
    server = servers.start({"/.well-known/agent-card.json": serve(CARD)})
    with SafeHttpClient(OutboundPolicy(allow_http=True)) as strict:
        fetcher = CardFetcher(strict)
        with pytest.raises(OutboundRefused, match="loopback"):
            fetcher.discover(server.url("/"))
        with pytest.raises(OutboundInvalidUrl):
            fetcher.discover("agent.example.com")
    assert server.seen == []


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("max-age=600", 600),
        ("public, max-age=600", 600),
        ('max-age="30"', 30),
        ("MAX-AGE=5, s-maxage=50", 50),
        ("no-cache", 0),
        ("max-age=600, no-store", 0),
        ("max-age=-1", None),
        ("max-age=abc", None),
        ("max-age=", None),
        ("max-age=99999999999999999999", 2**31),
        ("private", None),
    ],
)
def test_cache_control_max_age(header: str | None, expected: int | None) -> None:
    assert parse_max_age(header) == expected


# No deadline: a shared 2-core machine under load makes pure-CPU timings noisy.
@settings(deadline=None)
@given(st.text())
def test_max_age_parsing_never_fails(header: str) -> None:
    result = parse_max_age(header)
    assert result is None or 0 <= result <= 2**31
