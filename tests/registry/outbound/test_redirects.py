"""Redirects: each hop is checked like the first, chains are bounded, secrets stay home."""

from __future__ import annotations

import pytest

from registry.outbound import OutboundRefused, OutboundTooManyRedirects
from tests.registry.outbound.loopback import ClientFactory, Exchange, Route, Servers, fixed_resolver


def redirect(location: str, status: int = 302) -> Route:
    return lambda exchange: exchange.reply(status, b"moved", {"Location": location})


def echo(exchange: Exchange) -> None:
    seen = exchange.loopback.seen[-1]
    exchange.reply(200, f"{seen.method} {seen.body.decode()}".encode())


def test_a_redirect_is_followed_and_the_final_url_reported(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/old": redirect("/new", 301), "/new": echo})
    response = make_client().get(server.url("/old"))
    assert (response.status, response.url, response.body) == (200, server.url("/new"), b"GET ")


def test_a_redirect_into_a_private_network_is_refused(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/go": redirect("http://internal.test/admin")})
    client = make_client(resolver=fixed_resolver({"internal.test": ["10.0.0.1"], "agent.test": ["127.0.0.1"]}))
    with pytest.raises(OutboundRefused, match="10.0.0.1 is a private address") as caught:
        client.get(f"http://agent.test:{server.port}/go")
    assert f"redirected from http://agent.test:{server.port}/go" in str(caught.value)


@pytest.mark.parametrize(
    "location",
    ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "file:///etc/passwd"],
)
def test_redirects_to_metadata_or_other_schemes_are_refused(
    location: str, servers: Servers, make_client: ClientFactory
) -> None:
    server = servers.start({"/go": redirect(location)})
    with pytest.raises(OutboundRefused):
        make_client().get(server.url("/go"))


def test_redirect_chains_over_the_limit_are_cut(servers: Servers, make_client: ClientFactory) -> None:
    routes = {f"/r{n}": redirect(f"/r{n + 1}") for n in range(1, 4)}
    server = servers.start({**routes, "/r4": echo})
    client = make_client(max_redirects=2)
    assert client.get(server.url("/r2")).url == server.url("/r4")  # 2 redirects: fine
    with pytest.raises(OutboundTooManyRedirects, match="more than 2"):
        client.get(server.url("/r1"))
    assert server.paths()[3:] == ["/r1", "/r2", "/r3"]  # /r4 never asked for


def test_a_redirect_loop_ends(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/loop": redirect("/loop")})
    with pytest.raises(OutboundTooManyRedirects):
        make_client().get(server.url("/loop"))
    assert len(server.seen) == 4  # the first request and max_redirects = 3 follow-ups


def test_redirects_can_be_returned_instead_of_followed(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/old": redirect("/new")})
    response = make_client().get(server.url("/old"), follow_redirects=False)
    assert (response.status, response.headers["location"]) == (302, "/new")
    response = make_client(max_redirects=0).get(server.url("/old"))
    assert response.status == 302
    assert server.paths() == ["/old", "/old"]


def test_303_after_post_turns_into_get_and_307_keeps_the_body(servers: Servers, make_client: ClientFactory) -> None:
    server = servers.start({"/see-other": redirect("/echo", 303), "/temporary": redirect("/echo", 307), "/echo": echo})
    client = make_client()
    assert client.post(server.url("/see-other"), json={"a": 1}).body == b"GET "
    assert client.post(server.url("/temporary"), json={"a": 1}).body == b'POST {"a":1}'


def test_credentials_do_not_follow_a_redirect_to_another_origin(servers: Servers, make_client: ClientFactory) -> None:
    other = servers.start({"/landing": echo})
    server = servers.start({"/away": redirect(other.url("/landing")), "/home": redirect("/here"), "/here": echo})
    secret = {"Authorization": "Bearer s3cret", "X-Trace": "t1"}
    client = make_client()
    client.get(server.url("/away"), headers=secret)
    client.get(server.url("/home"), headers=secret)
    landed = other.seen[0].headers
    assert "authorization" not in landed and landed["x-trace"] == "t1"
    assert server.seen[-1].headers["authorization"] == "Bearer s3cret"  # same origin keeps it
