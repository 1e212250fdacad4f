"""A real Agentdex on loopback, with a few agents to find, for the official A2A clients."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.a2a_peers import seed_catalog


@pytest.fixture
def seeded_registry(registry_url: str, client: Any, auth: dict[str, str]) -> str:
    """The registry's URL; its catalog holds `tests.support.a2a_peers.CATALOG`."""
    seed_catalog(client, auth)
    return registry_url
