"""Timeouts, the wall-clock deadline and the response size cap, against misbehaving servers."""

from __future__ import annotations

import time

import pytest

from registry.outbound import OutboundTimeout, OutboundTooLarge
from tests.registry.outbound.loopback import ClientFactory, Exchange, Route, Servers

FIFTY_MB = 50 * 1024 * 1024


def hang(exchange: Exchange) -> None:
    exchange.loopback.released.wait()  # never answers while the test runs


def trickle_body(exchange: Exchange) -> None:
    exchange.send_response(200)
    exchange.send_header("Content-Length", "1000")
    exchange.end_headers()
    exchange.wfile.flush()
    while not exchange.loopback.released.wait(0.02):
        exchange.write_raw(b"x")  # one byte per 20 ms: each read is fast, the whole is not


def trickle_headers(exchange: Exchange) -> None:
    exchange.write_raw(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while not exchange.loopback.released.wait(0.02):
        exchange.write_raw(b"a")


def flood(chunked: bool) -> Route:
    def route(exchange: Exchange) -> None:
        exchange.send_response(200)
        exchange.send_header(
            "Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(FIFTY_MB)
        )
        exchange.end_headers()
        block = b"x" * 65536
        frame = b"%x\r\n%s\r\n" % (len(block), block) if chunked else block
        try:
            for _ in range(FIFTY_MB // len(block)):
                exchange.write_raw(frame)
                exchange.loopback.count_sent(len(block))
        except OSError:
            pass  # the client hung up, as it should

    return route


def sized(size: int) -> Route:
    return lambda exchange: exchange.reply(200, b"y" * size)


def test_a_server_that_never_answers_hits_the_read_timeout(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": hang})
    started = time.monotonic()
    with pytest.raises(OutboundTimeout) as caught:
        make_client(read_timeout=0.2, total_timeout=5.0).get(server.url("/"))
    assert caught.value.phase == "read"
    assert time.monotonic() - started < 1.0


def test_a_trickling_body_hits_the_total_deadline(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": trickle_body})
    started = time.monotonic()
    with pytest.raises(OutboundTimeout) as caught:
        make_client(read_timeout=5.0, total_timeout=0.3).get(server.url("/"))
    elapsed = time.monotonic() - started
    assert caught.value.phase == "total"
    assert 0.25 <= elapsed < 1.5  # a byte every 20 ms: the 5 s read timeout never fires


def test_trickling_headers_hit_the_total_deadline(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": trickle_headers})
    started = time.monotonic()
    with pytest.raises(OutboundTimeout) as caught:
        make_client(read_timeout=5.0, total_timeout=0.3).get(server.url("/"))
    assert caught.value.phase == "total"
    assert time.monotonic() - started < 1.5


def test_a_per_call_timeout_replaces_the_total_deadline(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": trickle_body})
    started = time.monotonic()
    with pytest.raises(OutboundTimeout):
        make_client(read_timeout=5.0, total_timeout=10.0).get(server.url("/"), timeout=0.2)
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_a_50_mb_answer_is_cut_at_the_cap_quickly(chunked: bool, servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": flood(chunked)})
    started = time.monotonic()
    with pytest.raises(OutboundTooLarge) as caught:
        make_client().get(server.url("/"), max_bytes=1_000_000)
    assert caught.value.limit == 1_000_000
    assert time.monotonic() - started < 1.0
    # The client stops reading at the cap; what the server got out is the cap plus what
    # socket buffers absorbed, far from 50 MB.
    assert server.bytes_sent < FIFTY_MB // 2


def test_the_cap_is_exact(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/at": sized(1000), "/over": sized(1001)})
    client = make_client(max_response_bytes=1000)
    assert len(client.get(server.url("/at")).body) == 1000
    with pytest.raises(OutboundTooLarge, match="1001 bytes"):
        client.get(server.url("/over"))  # refused on Content-Length, before reading


def test_the_cap_holds_without_a_content_length(servers: Servers, make_client: ClientFactory) -> None:
    def close_delimited(exchange: Exchange) -> None:
        exchange.write_raw(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"z" * 1001)
        exchange.close_connection = True

    server = servers.start({"/": close_delimited, "/ok": sized(10)})
    client = make_client(max_response_bytes=1000)
    with pytest.raises(OutboundTooLarge, match="more than 1000 bytes"):
        client.get(server.url("/"))
    assert client.get(server.url("/ok")).body == b"y" * 10
