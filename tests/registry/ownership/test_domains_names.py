"""How domains are written: lower case, IDNA, no trailing dot; ports and addresses only where
plain http is allowed; a card URL's domain as the proof checks it."""

from __future__ import annotations

import pytest

from registry.ownership import InvalidDomain, host_of_url, normalize_domain


@pytest.mark.parametrize(
    ("raw", "written"),
    [("Agents.Example.COM.", "agents.example.com"), ("bücher.example", "xn--bcher-kva.example"), (" a.b.c ", "a.b.c")],
)
def test_names_are_normalised(raw: str, written: str) -> None:
    assert normalize_domain(raw, allow_http=False) == written


@pytest.mark.parametrize(
    "raw", ["https://example.com", "example.com/path", "127.0.0.1", "example.com:8443", "localhost", "", "a..b"]
)
def test_without_plain_http_only_full_names_are_accepted(raw: str) -> None:
    with pytest.raises(InvalidDomain):
        normalize_domain(raw, allow_http=False)


def test_with_plain_http_addresses_and_ports_are_accepted() -> None:
    assert normalize_domain("127.0.0.1:8080", allow_http=True) == "127.0.0.1:8080"
    assert normalize_domain("LocalHost:80", allow_http=True) == "localhost:80"
    assert normalize_domain("[::1]:8080", allow_http=True) == "[::1]:8080"


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("https://Agent.Example.com/.well-known/agent-card.json", "agent.example.com"),
        ("https://agent.example.com:8443/card", "agent.example.com"),  # a proven name covers its ports
        ("http://127.0.0.1:9000/card", "127.0.0.1:9000"),  # plain http: the exact host:port
        ("http://localhost/card", "localhost:80"),
        ("not a url", None),
    ],
)
def test_a_card_urls_domain(url: str, domain: str | None) -> None:
    assert host_of_url(url) == domain
