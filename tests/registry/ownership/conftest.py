"""Domain proofs against real peers on loopback: an HTTP server serving the challenge, and a DNS
server answering TXT for it, which the registry is configured to ask."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from registry.settings import Settings
from tests.support.ard_publishers import ArdPublisher, serving
from tests.support.dns_server import LoopbackDns

FAILURES_BEFORE_LAPSE = 2


@pytest.fixture(scope="module")
def module_dns() -> Iterator[LoopbackDns]:
    """One resolver for a module: stopping a dnslib server takes half a second."""
    server = LoopbackDns()
    yield server
    server.close()


@pytest.fixture
def dns_server(module_dns: LoopbackDns) -> LoopbackDns:
    """The module's resolver, empty for each test."""
    module_dns.clear()
    return module_dns


@pytest.fixture(scope="module")
def publisher() -> Iterator[ArdPublisher]:
    """A's domain, for the whole module (each test proves it again: the database starts empty)."""
    yield from serving()


@pytest.fixture
def settings(settings: Settings, dns_server: LoopbackDns) -> Settings:
    ownership = dataclasses.replace(
        settings.ownership,
        dns_nameservers=(dns_server.address,),
        dns_timeout=2.0,
        http_timeout=2.0,
        recheck_failures_before_lapse=FAILURES_BEFORE_LAPSE,
    )
    return dataclasses.replace(settings, ownership=ownership)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def add_domain(client: Any, token: str, domain: str, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/domains", json={"domain": domain, **body}, headers=bearer(token))
    assert response.status_code in (200, 201), response.get_json()
    entry: dict[str, Any] = response.get_json()
    return entry


def verify(client: Any, token: str, domain: str, method: str) -> Any:
    return client.post(f"/v1/domains/{domain}/verify", json={"method": method}, headers=bearer(token))


def challenge_path(entry: dict[str, Any]) -> str:
    """The path part of the HTTP challenge URL (the loopback server serves paths)."""
    url: str = entry["challenges"]["http"]["url"]
    return "/" + url.split("/", 3)[3]
