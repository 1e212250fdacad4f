"""The registry's own A2A agent, over a catalog of a few agents."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.a2a_peers import seed_catalog


@pytest.fixture
def catalog_ids(client: Any, auth: dict[str, str]) -> dict[str, str]:
    """`tests.support.a2a_peers.CATALOG` registered; the agents' ids by name."""
    return seed_catalog(client, auth)
