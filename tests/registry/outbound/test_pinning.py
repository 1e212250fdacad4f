"""DNS is resolved once per hop and the connection goes to the address that was checked."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

import pytest

from registry.outbound import OutboundPolicy, OutboundRefused, OutboundTlsError, SafeHttpClient
from tests.registry.outbound.loopback import (
    ClientFactory,
    Exchange,
    LoopbackServer,
    Servers,
    fixed_resolver,
    make_certificate,
)


def who(exchange: Exchange) -> None:
    exchange.reply(200, b"pinned")


def test_a_rebinding_name_cannot_move_the_connection_after_the_check(
    servers: Servers, make_client: ClientFactory
) -> None:
    server = servers.start({"/who": who})
    answers = iter([["127.0.0.1"], ["10.0.0.1"], ["10.0.0.1"]])
    asked: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return next(answers)

    client = make_client(resolver=rebinding)
    response = client.get(f"http://rebind.test:{server.port}/who")

    # One resolution for the hop; the server on the checked address got the request, with
    # the name (not the IP) as Host. "rebind.test" is unknown to the system resolver, so a
    # second lookup by the HTTP stack could not have produced this connection.
    assert response.body == b"pinned"
    assert asked == ["rebind.test"]
    assert [seen.headers["host"] for seen in server.seen] == [f"rebind.test:{server.port}"]

    # The next request resolves again, sees the private answer and refuses.
    with pytest.raises(OutboundRefused, match="10.0.0.1"):
        client.get(f"http://rebind.test:{server.port}/who")
    assert len(server.seen) == 1


def test_the_first_allowed_answer_is_used_and_forbidden_ones_never_connected(
    servers: Servers, make_client: ClientFactory
) -> None:
    server = servers.start({"/who": who})
    only_127_0_0_1 = (ipaddress.ip_network("127.0.0.1/32"),)
    resolver = fixed_resolver(
        {"first.test": ["127.0.0.1", "10.0.0.1"], "second.test": ["169.254.169.254", "127.0.0.1"]}
    )
    client = make_client(resolver=resolver, allowed_networks=only_127_0_0_1)
    assert client.get(f"http://first.test:{server.port}/who").status == 200
    assert client.get(f"http://second.test:{server.port}/who").status == 200
    assert [seen.headers["host"] for seen in server.seen] == [
        f"first.test:{server.port}",
        f"second.test:{server.port}",
    ]


@dataclass(frozen=True)
class TlsServer:
    server: LoopbackServer
    ca_bundle: Path  # the server's self-signed certificate
    sni_seen: list[str]


@pytest.fixture
def tls_server(servers: Servers, tmp_path: Path) -> TlsServer:
    certificate = make_certificate(tmp_path, "agent.test")
    sni_seen: list[str] = []
    server = servers.start({"/who": who}, tls=certificate.server_context(sni_seen))
    return TlsServer(server, certificate.cert_path, sni_seen)


def test_https_keeps_sni_and_certificate_checks_for_the_name(tls_server: TlsServer) -> None:
    server, ca_bundle, sni_seen = tls_server.server, tls_server.ca_bundle, tls_server.sni_seen
    resolver = fixed_resolver({"agent.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    policy = OutboundPolicy(
        allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
        ca_bundle=str(ca_bundle),
        read_timeout=1.0,
        total_timeout=2.0,
    )
    with SafeHttpClient(policy, resolver=resolver) as client:
        response = client.get(f"https://agent.test:{server.port}/who")
        assert response.body == b"pinned"
        assert sni_seen == ["agent.test"]
        assert server.seen[0].headers["host"] == f"agent.test:{server.port}"

        # Same IP, other name: the certificate does not cover it, so the client refuses it.
        with pytest.raises(OutboundTlsError):
            client.get(f"https://other.test:{server.port}/who")
        with pytest.raises(OutboundTlsError):
            client.get(f"https://127.0.0.1:{server.port}/who")
    assert len(server.seen) == 1


def test_https_to_a_server_with_an_untrusted_certificate_fails(tls_server: TlsServer) -> None:
    server = tls_server.server
    policy = OutboundPolicy(allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),), total_timeout=2.0)
    with SafeHttpClient(policy, resolver=fixed_resolver({"agent.test": ["127.0.0.1"]})) as client:
        with pytest.raises(OutboundTlsError, match="certificate"):
            client.get(f"https://agent.test:{server.port}/who")
    assert server.seen == []


def test_a_redirect_from_https_to_plain_http_is_refused(tls_server: TlsServer, servers: Servers) -> None:
    server, ca_bundle = tls_server.server, tls_server.ca_bundle
    plain = servers.start({"/who": who})
    server.routes["/down"] = lambda ex: ex.reply(302, b"", {"Location": plain.url("/who", host="agent.test")})
    policy = OutboundPolicy(
        allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),), ca_bundle=str(ca_bundle), total_timeout=2.0
    )
    with SafeHttpClient(policy, resolver=fixed_resolver({"agent.test": ["127.0.0.1"]})) as client:
        with pytest.raises(OutboundRefused, match="plain http"):
            client.get(f"https://agent.test:{server.port}/down")
    assert plain.seen == []
