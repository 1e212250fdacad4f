"""The policy refuses before anything is sent: schemes, address classes, URLs, header injection."""

from __future__ import annotations

import re
from ipaddress import ip_address

import pytest

from registry.outbound import (
    OutboundConnectionError,
    OutboundInvalidUrl,
    OutboundPolicy,
    OutboundRefused,
    SafeHttpClient,
)
from registry.outbound.addresses import display_address
from tests.registry.outbound.loopback import ClientFactory, Exchange, Servers, fixed_resolver


def ok(exchange: Exchange) -> None:
    exchange.reply(200, b"{}", {"Content-Type": "application/json"})


def test_loopback_is_refused_by_default(servers: Servers) -> None:
    server = servers.start({"/": ok})
    client = SafeHttpClient(OutboundPolicy(allow_http=True))
    try:
        with pytest.raises(OutboundRefused, match="loopback"):
            client.get(server.url("/"))
    finally:
        client.close()
    assert server.seen == []


def test_loopback_is_reachable_when_127_0_0_0_8_is_allowlisted(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": ok})
    assert make_client().get(server.url("/")).status == 200


def test_plain_http_is_refused_unless_allowed(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/": ok})
    with pytest.raises(OutboundRefused, match="plain http"):
        make_client(allow_http=False).get(server.url("/"))
    assert server.seen == []


FORBIDDEN = [
    "10.0.0.1",
    "172.31.255.254",
    "192.168.0.10",
    "169.254.169.254",
    "100.64.0.1",
    "224.0.0.1",
    "0.0.0.0",
    "240.0.0.1",
    "127.0.0.1",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:0:10.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:a9fe:a9fe::1",
    "fe80::1",
    "fd12:3456::1",
    "ff02::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
]


@pytest.mark.parametrize("address", FORBIDDEN)
def test_every_forbidden_address_class_is_refused_before_connecting(address: str) -> None:
    resolved: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        resolved.append(host)
        return [address]

    # Nothing is allowlisted; a connection attempt would end in a timeout or a connection
    # error, never in OutboundRefused.
    client = SafeHttpClient(OutboundPolicy(connect_timeout=0.2, total_timeout=0.5), resolver=resolver)
    try:
        with pytest.raises(OutboundRefused, match=re.escape(display_address(ip_address(address)))):
            client.get("https://victim.test/latest/meta-data")
        with pytest.raises(OutboundRefused):
            client.check_url("https://victim.test/hook")
    finally:
        client.close()
    assert resolved == ["victim.test", "victim.test"]


def test_an_ip_literal_url_is_checked_too(servers: Servers) -> None:
    server = servers.start({"/": ok})
    client = SafeHttpClient(OutboundPolicy(allow_http=True))
    try:
        for host in ("127.0.0.1", "[::ffff:127.0.0.1]", "[::1]"):
            with pytest.raises(OutboundRefused):
                client.get(f"http://{host}:{server.port}/")
        # glibc reads a bare number as an IPv4 address: the check sees 127.0.0.1.
        with pytest.raises(OutboundRefused, match="127.0.0.1"):
            client.get(f"http://2130706433:{server.port}/")
    finally:
        client.close()
    assert server.seen == []


def test_check_url_accepts_an_allowed_target(make_client: ClientFactory) -> None:
    client = make_client(resolver=fixed_resolver({"hooks.test": ["127.0.0.1"]}))
    client.check_url("http://hooks.test:9/deliver")  # nothing listens there; no request is made


def test_check_url_says_why_a_scheme_is_refused(make_client: ClientFactory) -> None:
    with pytest.raises(OutboundRefused, match="plain http"):
        make_client(allow_http=False).check_url("http://hooks.test/")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/card.json",
        "file:///etc/passwd",
        "https://user:secret@example.com/",
        "https:///no-host",
        "not a url",
        "https://exa mple.com/",
        "https://example.com/\r\nInjected: 1",
        "https://example.com:0/",
        "https://example.com:99999/",
        "https://bad_host%.com/",
        "",
    ],
)
def test_malformed_urls_are_refused(url: str, make_client: ClientFactory) -> None:
    with pytest.raises(OutboundInvalidUrl):
        make_client().get(url)


def test_a_name_that_does_not_resolve_is_a_connection_error(make_client: ClientFactory) -> None:
    client = make_client(resolver=fixed_resolver({}))
    with pytest.raises(OutboundConnectionError, match="cannot resolve nowhere.test"):
        client.get("http://nowhere.test/")


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Trace": "abc\r\nX-Injected: 1"},
        {"X-Trace": "abc\nX-Injected: 1"},
        {"X-Trace": "abc\rdef"},
        {"X-Trace": "nul\0byte"},
        {"X-Bad\r\nName": "1"},
        {"Bad Name": "1"},
        {"Host": "internal.example"},
        {"Content-Length": "0"},
        {"Transfer-Encoding": "chunked"},
    ],
)
def test_header_injection_is_refused_before_sending(
    headers: dict[str, str], servers: Servers, make_client: ClientFactory
) -> None:
    server = servers.start({"/": ok})
    with pytest.raises(OutboundRefused):
        make_client().get(server.url("/"), headers=headers)
    assert server.seen == []


def test_an_invalid_method_is_refused(make_client: ClientFactory) -> None:
    with pytest.raises(OutboundRefused):
        make_client().request("GET /admin HTTP/1.1\r\n", "http://127.0.0.1:9/")
