"""Tokens narrowed to domains: `create(domains=...)` keeps them, the actor carries them, and the
one check (`Actor.require_domain`) lets such a token change only agents whose card URL host is one
of its domains or under one; reads are not narrowed."""

from __future__ import annotations

import pytest

from registry.auth import Actor, OutsideTokenDomains
from registry.auth.actor import card_host
from registry.errors import InvalidRequest
from tests.support.cards import make_card


def _actor(*domains: str) -> Actor:
    return Actor(1, "alice", frozenset({"agents:write"}), frozenset(domains))


@pytest.mark.parametrize(
    ("domains", "host", "allowed"),
    [
        (("example.com",), "example.com", True),
        (("example.com",), "agent.example.com", True),  # subdomains are included
        (("example.com",), "a.b.example.com:8443", True),  # any port when the domain names none
        (("example.com",), "badexample.com", False),  # a suffix is not a subdomain
        (("example.com",), "example.com.evil.org", False),
        (("example.com",), "example.org", False),
        (("agent.example.com",), "example.com", False),  # not the parent
        (("127.0.0.1:8443",), "127.0.0.1:8443", True),
        (("127.0.0.1:8443",), "127.0.0.1:9000", False),  # a domain with a port needs that port
        (("127.0.0.1:8443",), "127.0.0.1", False),
        (("a.example", "b.example"), "x.b.example", True),
        (("example.com",), "EXAMPLE.com.", True),
    ],
)
def test_a_narrowed_token_may_act_only_within_its_domains(domains, host, allowed):
    assert _actor(*domains).may_act_on(host) is allowed


def test_an_unnarrowed_token_acts_anywhere():
    actor = Actor(1, "alice", frozenset({"agents:write"}))
    assert actor.domains is None and actor.may_act_on("anything.example")
    actor.require_domain_of("https://anything.example/card.json")


def test_the_refusal_names_the_domains_and_what_to_do():
    with pytest.raises(OutsideTokenDomains) as refused:
        _actor("example.com").require_domain_of("https://agent.example.org:8443/.well-known/agent-card.json")
    assert refused.value.code == "outside_token_domains"
    assert "agent.example.org:8443" in refused.value.message and "--domain" in refused.value.message
    assert refused.value.details == {"host": "agent.example.org:8443", "tokenDomains": ["example.com"]}


def test_the_card_host_is_the_urls_host_and_port():
    assert card_host("https://Agent.Example.com/card.json") == "agent.example.com"
    assert card_host("http://127.0.0.1:9000/.well-known/agent-card.json") == "127.0.0.1:9000"
    assert card_host("https://user:pw@example.com/x") == "example.com"
    assert card_host("https://Bücher.example/card.json") == "xn--bcher-kva.example"  # as token domains are kept


def test_a_token_keeps_its_domains_and_its_actor_carries_them(services):
    issued = services.tokens.create("ci", ["agents:write"], domains=["Example.COM.", "127.0.0.1:8443", "example.com"])
    assert issued.domains == ("127.0.0.1:8443", "example.com")
    actor = services.tokens.authenticate(issued.token)
    assert actor.domains == frozenset({"127.0.0.1:8443", "example.com"}) and actor.token_id is not None
    assert services.tokens.find("ci").domains == ("127.0.0.1:8443", "example.com")
    plain = services.tokens.authenticate(services.tokens.create("any", ["agents:write"]).token)
    assert plain.domains is None


@pytest.mark.parametrize("domain", ["https://example.com", "example.com/path", "*.example.com", "", "exa mple.com"])
def test_a_domain_must_be_a_host(services, domain):
    with pytest.raises(InvalidRequest, match="is not a domain"):
        services.tokens.create("ci", ["agents:write"], domains=[domain])


def test_an_international_domain_is_kept_idna_encoded(services):
    issued = services.tokens.create("ci", ["agents:write"], domains=["bücher.example"])
    assert issued.domains == ("xn--bcher-kva.example",)
    assert services.tokens.create("de", ["agents:write"], domains=["faß.de"]).domains == ("xn--fa-hia.de",)  # UTS46


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _register(client, token: str, card_url: str):  # type: ignore[no-untyped-def]
    body = {"card": make_card("Narrow Agent", url=card_url.rsplit("/", 1)[0]), "cardUrl": card_url}
    return client.post("/v1/agents", json=body, headers=_bearer(token))


def test_a_narrowed_token_registers_and_changes_only_agents_on_its_domains(client, services):
    narrow = services.tokens.create("ci", ["agents:write"], domains=["example.com"]).token
    broad = services.tokens.create("ci-broad", ["agents:write"], principal="ci").token

    mine = _register(client, narrow, "https://agent.example.com/card.json")
    assert mine.status_code == 201, mine.json
    elsewhere = _register(client, narrow, "https://agent.example.org/card.json")
    assert elsewhere.status_code == 403 and elsewhere.json["error"]["code"] == "outside_token_domains"

    other = _register(client, broad, "https://agent.example.org/card.json")  # the same owner, another token
    assert other.status_code == 201, other.json
    other_id = other.json["id"]
    for refused in (
        client.delete(f"/v1/agents/{other_id}", headers=_bearer(narrow)),
        client.patch(f"/v1/agents/{other_id}", json={"status": "deprecated"}, headers=_bearer(narrow)),
    ):
        assert refused.status_code == 403 and refused.json["error"]["code"] == "outside_token_domains"
    assert client.get(f"/v1/agents/{other_id}", headers=_bearer(narrow)).status_code == 200  # reads are not narrowed
    assert client.delete(f"/v1/agents/{mine.json['id']}", headers=_bearer(narrow)).status_code == 204
