"""A running Agentdex for the ARD peers: served over real HTTP on loopback behind what looks to it
like one TLS-terminating proxy (AGENTDEX_FORWARDED_HOPS=1), so it names itself https://HOST, with
a few real-looking agents of different publishers, two to a manifest page (so the manifest nests)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from registry.container import Services
from registry.settings import Settings
from tests.support.ard_peers import AGENTS

PAGE = 2


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, forwarded_hops=1, ard=dataclasses.replace(settings.ard, manifest_page=PAGE))


@pytest.fixture
def ard_registry(services: Services, actor: Any, registry_url: str) -> Iterator[int]:
    """The registry's loopback port, with AGENTS registered in this order."""
    for host, card in AGENTS.items():
        services.catalog.register_card(actor, card, f"https://{host}/.well-known/agent-card.json")
    yield int(urlsplit(registry_url).port or 0)


@pytest.fixture
def actor(services: Services):  # type: ignore[no-untyped-def]
    return services.tokens.authenticate(services.tokens.create("publisher", ["agents:write"]).token)
