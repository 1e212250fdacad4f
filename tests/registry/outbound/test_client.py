"""Everyday behaviour of the client: requests, responses, errors, keep-alive across threads."""

from __future__ import annotations

import ipaddress
import json
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from registry.outbound import (
    OutboundBadResponse,
    OutboundConnectionError,
    OutboundInvalidJson,
    OutboundPolicy,
    OutboundRefused,
    OutboundResponse,
)
from registry.outbound.policy import DEFAULT_USER_AGENT
from tests.registry.outbound.loopback import ClientFactory, Exchange, Servers, closed_port


def describe(exchange: Exchange) -> None:
    seen = exchange.loopback.seen[-1]
    document = {"method": seen.method, "headers": seen.headers, "body": seen.body.decode()}
    exchange.reply(200, json.dumps(document).encode(), {"Content-Type": "application/json", "X-Twice": "a"})


def test_get_sends_a_clear_user_agent_and_reads_json(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/d": describe})
    response = make_client().get(server.url("/d?x=1"), headers={"Accept": "application/json"})
    assert isinstance(response, OutboundResponse)
    document = response.json()
    assert isinstance(document, dict)
    assert document["headers"]["user-agent"] == DEFAULT_USER_AGENT
    assert document["headers"]["accept"] == "application/json"
    assert response.headers["content-type"] == response.headers["CONTENT-TYPE"] == "application/json"
    assert response.url == server.url("/d?x=1") and response.elapsed > 0
    assert server.paths() == ["/d?x=1"]


def test_post_json_and_raw_bodies(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/d": describe})
    client = make_client()
    sent = client.post(server.url("/d"), json={"task": "ü"}).json()
    assert isinstance(sent, dict)
    assert sent["body"] == '{"task":"ü"}' and sent["headers"]["content-type"] == "application/json"
    raw = client.post(server.url("/d"), body=b"abc", headers={"content-type": "text/plain"}).json()
    assert isinstance(raw, dict)
    assert raw["body"] == "abc" and raw["headers"]["content-type"] == "text/plain"
    with pytest.raises(ValueError):
        client.post(server.url("/d"), body=b"x", json={})


def test_a_caller_may_replace_the_user_agent(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/d": describe})
    make_client().get(server.url("/d"), headers={"user-agent": "Agentdex-probe/1"})
    assert server.seen[0].headers["user-agent"] == "Agentdex-probe/1"


def test_repeated_header_fields_are_joined(servers: Servers, make_client: ClientFactory) -> None:
    def twice(exchange: Exchange) -> None:
        exchange.send_response(200)
        exchange.send_header("Link", "<a>")
        exchange.send_header("Link", "<b>")
        exchange.send_header("Content-Length", "0")
        exchange.end_headers()

    server = servers.start({"/": twice})
    response = make_client().get(server.url("/"))
    assert response.headers["link"] == "<a>, <b>"
    assert response.headers.getlist("LINK") == ["<a>", "<b>"]


@pytest.mark.parametrize(
    "body",
    [b"<html>", b"", b'{"a": NaN}', b"\xff\xfe{", b"[" * 100_000, b'{"name": "a\\u0000"}', b"[" + b"1" * 5_000 + b"]"],
)
def test_invalid_json_is_a_typed_error(body: bytes, servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": lambda exchange: exchange.reply(200, body)})
    response = make_client().get(server.url("/"))
    with pytest.raises(OutboundInvalidJson):
        response.json()


def test_head_and_empty_answers(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": lambda exchange: exchange.reply(204)})
    client = make_client()
    assert client.request("HEAD", server.url("/")).body == b""
    assert client.get(server.url("/")).status == 204


def test_a_closed_port_is_a_connection_error(make_client: ClientFactory) -> None:
    with pytest.raises(OutboundConnectionError, match="refused"):
        make_client().get(f"http://127.0.0.1:{closed_port()}/")


def test_a_garbage_answer_is_a_bad_response(servers: Servers, make_client: ClientFactory) -> None:
    def garbage(exchange: Exchange) -> None:
        exchange.write_raw(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        exchange.close_connection = True

    server = servers.start({"/": garbage})
    with pytest.raises(OutboundBadResponse):
        make_client().get(server.url("/"))


def test_connections_are_kept_alive_and_shared_by_threads(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": lambda exchange: exchange.reply(200, b"ok")})
    client = make_client()
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: client.get(server.url("/")).status, range(200)))
    assert statuses == [200] * 200
    connections = {seen.client_port for seen in server.seen}
    assert len(server.seen) == 200
    assert len(connections) <= 8  # at most one per thread, each reused


def test_a_connection_the_server_closed_is_replaced(servers: Servers, make_client: ClientFactory) -> None:
    def once(exchange: Exchange) -> None:
        exchange.reply(200, b"ok")
        exchange.close_connection = True  # closes after answering, without saying so

    server = servers.start({"/": once})
    client = make_client()
    assert [client.get(server.url("/")).body for _ in range(3)] == [b"ok"] * 3
    assert len({seen.client_port for seen in server.seen}) == 3


@pytest.mark.parametrize(
    "overrides",
    [
        {"total_timeout": 0},
        {"read_timeout": -1},
        {"max_response_bytes": 0},
        {"max_redirects": -1},
        {"user_agent": "a\r\nb"},
    ],
)
def test_a_nonsensical_policy_is_rejected(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        OutboundPolicy(**overrides)  # type: ignore[arg-type]


def ipv6_loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback_works(), reason="no IPv6 loopback here")
def test_ipv6_targets_work_when_allowlisted(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": describe}, host="::1")
    with pytest.raises(OutboundRefused, match="::1 is a loopback address"):
        make_client().get(server.url("/"))
    client = make_client(allowed_networks=(ipaddress.ip_network("::1/128"),))
    response = client.get(server.url("/"))
    assert response.url == f"http://[::1]:{server.port}/"
    assert server.seen[0].headers["host"] == f"[::1]:{server.port}"


def test_pools_beyond_the_limit_are_evicted_and_rebuilt(servers: Servers, make_client: ClientFactory) -> None:
    first = servers.start({"/": lambda exchange: exchange.reply(200, b"1")})
    second = servers.start({"/": lambda exchange: exchange.reply(200, b"2")})
    client = make_client(pool_connections=1)
    bodies = [client.get(server.url("/")).body for server in (first, second, first, second)]
    assert bodies == [b"1", b"2", b"1", b"2"]
    assert len({seen.client_port for seen in first.seen}) == 2  # its pool was closed in between


def test_a_kept_alive_connection_dropped_mid_request_is_retried_once_for_idempotent_methods(
    servers: Servers, make_client: ClientFactory
) -> None:
    answered_ports: set[int] = set()

    def one_per_connection(exchange: Exchange) -> None:
        # The race a keep-alive client meets: the server closes an idle connection just as
        # the next request goes out on it.
        port = exchange.client_address[1]
        if port in answered_ports:
            exchange.close_connection = True
            return
        answered_ports.add(port)
        exchange.reply(200, b"ok")

    server = servers.start({"/": one_per_connection})
    client = make_client()
    assert client.get(server.url("/")).body == b"ok"
    assert client.get(server.url("/")).body == b"ok"  # dropped, then retried on a new connection
    assert len(server.seen) == 3
    with pytest.raises(OutboundConnectionError):
        client.post(server.url("/"), body=b"not idempotent")  # never sent twice
