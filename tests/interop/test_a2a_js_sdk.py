"""The official A2A JavaScript SDK's client (`@a2a-js/sdk`) finds agents through the registry's
own card, over each binding the card lists, and verifies the card's signature on the way."""

from __future__ import annotations

import json

import pytest

from tests.support.a2a_peers import js_find_agents


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_js_client_finds_agents_over_each_binding_of_the_card(seeded_registry: str, binding: str) -> None:
    found = js_find_agents(seeded_registry, binding, "tag:weather")

    assert (found["protocol"], found["version"]) == (binding, "1.0")
    assert found["state"] == "TASK_STATE_COMPLETED"
    assert found["agents"] == ["Weather Agent"] and found["total"] == 1
    assert "Weather Agent" in found["text"]
    assert found["readBack"] == {"id": found["readBack"]["id"], "state": "TASK_STATE_COMPLETED", "history": 0}
    assert found["cancel"] == "TaskNotCancelableError"  # the task was complete at once


def test_the_js_client_sends_filters_as_data_and_hears_the_closest_tags_when_nothing_matches(
    seeded_registry: str,
) -> None:
    found = js_find_agents(
        seeded_registry, "JSONRPC", json.dumps({"tags": ["currency"], "capabilities": ["streaming"]})
    )
    assert found["agents"] == [] and found["total"] == 0
    assert found["suggestedTags"] and "No agent found" in found["text"]

    found = js_find_agents(seeded_registry, "HTTP+JSON", json.dumps({"tags": ["fx", "translation"], "match": "any"}))
    assert sorted(found["agents"]) == ["Currency Agent", "Translator Agent"]
