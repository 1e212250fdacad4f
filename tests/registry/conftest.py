"""Fixtures shared by the service tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def actor(services, writer_token):  # type: ignore[no-untyped-def]
    """The principal behind the writer token, as services see a caller."""
    return services.tokens.authenticate(writer_token)
