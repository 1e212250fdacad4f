"""A client of the 0.3 generation (the official Python SDK's 0.3 line, in a virtualenv of its
own) reads the registry's card by its 0.3 fields and finds agents over JSON-RPC with `message/send`."""

from __future__ import annotations

import json

from tests.support.a2a_peers import v03_find_agents


def test_the_03_client_finds_agents_through_the_cards_03_fields(seeded_registry: str) -> None:
    found = v03_find_agents(seeded_registry, "tag:currency")

    assert found["card"] == {"url": f"{seeded_registry}/a2a/jsonrpc", "preferredTransport": "JSONRPC", "version": "0.3"}
    assert found["state"] == "completed"
    assert found["agents"] == ["Currency Agent"] and found["total"] == 1
    assert "Currency Agent" in found["text"]
    assert found["readBack"]["state"] == "completed" and found["readBack"]["history"] == 0
    assert found["cancel"] == -32002  # TaskNotCancelableError


def test_the_03_client_sends_filters_as_a_data_part(seeded_registry: str) -> None:
    found = v03_find_agents(seeded_registry, json.dumps({"tags": ["weather"], "capabilities": ["streaming"]}))
    assert found["agents"] == ["Weather Agent"]
