"""Fixtures for the outbound client tests: loopback servers and clients that are closed after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from registry.outbound import SafeHttpClient
from tests.registry.outbound.loopback import ClientFactory, Servers, loopback_policy, servers_fixture


@pytest.fixture
def servers() -> Iterator[Servers]:
    yield from servers_fixture()


@pytest.fixture
def make_client() -> Iterator[ClientFactory]:
    """``make_client(resolver=None, **policy_overrides)`` on top of ``loopback_policy``."""
    clients: list[SafeHttpClient] = []

    def make(resolver: Callable[[str, int], list[str]] | None = None, **overrides: Any) -> SafeHttpClient:
        client = SafeHttpClient(loopback_policy(**overrides), resolver=resolver)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
