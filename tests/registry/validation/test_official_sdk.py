"""The official a2a-sdk as a peer: the cards it serves are valid, the v1.0 cards we accept it parses."""

from __future__ import annotations

import json

import pytest

from registry.validation import summarize_card, validate_card
from tests.registry.validation import sample_cards
from tests.registry.validation.test_index_cards import CARDS, INDEX, expected_validity

json_format = pytest.importorskip("google.protobuf.json_format")
a2a_types = pytest.importorskip("a2a.types")
response_helpers = pytest.importorskip("a2a.server.request_handlers.response_helpers")


def sdk_served_card(card: dict) -> dict:
    """What an a2a-sdk 1.x server publishes for `card` (1.0 fields plus the 0.3 view)."""
    message = json_format.ParseDict(card, a2a_types.AgentCard())
    return response_helpers.agent_card_to_dict(message)


def test_a_hybrid_card_served_by_the_sdk_is_valid_with_nothing_to_warn() -> None:
    card = sample_cards.v10()
    card["supportedInterfaces"].append(
        {"url": "https://agent.example.com/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    )
    served = sdk_served_card(card)
    report = validate_card(served)
    assert (report.valid, report.flavor) == (True, "1.0+0.3")
    assert report.issues == []
    assert summarize_card(served).protocol_versions == ["1.0", "0.3"]


def test_a_pure_1_0_card_served_by_the_sdk_is_valid() -> None:
    report = validate_card(sdk_served_card(sample_cards.v10()))
    assert (report.valid, report.flavor, report.issues) == (True, "1.0", [])


V1_VALID = [
    e["file"]
    for e in INDEX
    if expected_validity(e) and "supportedInterfaces" in json.loads((CARDS / e["file"]).read_text(encoding="utf-8"))
]


@pytest.mark.parametrize("name", V1_VALID)
def test_the_sdk_parses_every_1_0_card_we_accept(name: str) -> None:
    card = json.loads((CARDS / name).read_text(encoding="utf-8"))
    json_format.ParseDict(card, a2a_types.AgentCard(), ignore_unknown_fields=True)
