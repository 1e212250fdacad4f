"""summarize_card: one shape of search fields for cards of every version."""

from __future__ import annotations

import json

import pytest

from registry.validation import summarize_card, validate_card
from registry.validation.summary import InterfaceSummary
from tests.registry.validation import sample_cards
from tests.registry.validation.test_index_cards import CARDS, INDEX, expected_validity


def test_v1_card() -> None:
    summary = summarize_card(sample_cards.v10())
    assert (summary.name, summary.version, summary.provider_org) == ("Recipe Agent", "1.2.0", "Example Org")
    assert summary.protocol_versions == ["1.0"]
    assert summary.interfaces == [
        InterfaceSummary("https://agent.example.com/a2a", "JSONRPC", "1.0"),
        InterfaceSummary("grpc://agent.example.com:443", "GRPC", "1.0"),
    ]
    assert summary.capabilities == {"streaming": True, "pushNotifications": False, "extendedAgentCard": True}
    skill = summary.skills[0]
    assert (skill.id, skill.tags, skill.input_modes) == ("find-recipe", ["cooking"], ["text/plain"])
    assert skill.output_modes == ["application/json"]  # the card's default
    assert summary.signatures_count == 1


def test_hybrid_card_lists_both_protocol_versions_and_only_its_1_0_interfaces() -> None:
    summary = summarize_card(sample_cards.hybrid())
    assert summary.protocol_versions == ["1.0", "0.3"]
    assert [i.url for i in summary.interfaces] == [
        "https://agent.example.com/a2a",
        "grpc://agent.example.com:443",
        "https://agent.example.com/v03",
    ]


def test_v03_card_maps_its_fields_to_the_common_shape() -> None:
    summary = summarize_card(sample_cards.v03())
    assert summary.protocol_versions == ["0.3.0"]
    assert summary.interfaces == [
        InterfaceSummary("https://agent.example.com/a2a", "JSONRPC", "0.3.0"),
        InterfaceSummary("https://agent.example.com/grpc", "GRPC", "0.3.0"),
    ]
    assert summary.capabilities["extendedAgentCard"] is True  # supportsAuthenticatedExtendedCard
    assert (summary.documentation_url, summary.icon_url) == ("https://example.com/docs", "https://example.com/icon.png")
    assert summary.skills[0].examples == ["A bread recipe, please"]
    assert summary.skills[0].input_modes == ["text/plain", "application/json"]
    assert summary.signatures_count == 0


@pytest.mark.parametrize(
    ("card", "versions", "binding"),
    [
        (sample_cards.v02(), ["0.2.0"], "JSONRPC"),
        (sample_cards.v01(), ["0.1"], "JSONRPC"),
    ],
)
def test_older_cards_get_their_inferred_version_and_default_transport(card, versions, binding) -> None:
    summary = summarize_card(card)
    assert summary.protocol_versions == versions
    assert [(i.binding, i.protocol_version) for i in summary.interfaces] == [(binding, versions[0])]
    assert summary.provider_org is None and summary.description in ("", "Tells interesting facts")


@pytest.mark.parametrize("entry", [e for e in INDEX if expected_validity(e)], ids=lambda e: e["file"])
def test_every_valid_card_of_the_index_summarises(entry) -> None:
    card = json.loads((CARDS / entry["file"]).read_text(encoding="utf-8"))
    assert validate_card(card).valid
    summary = summarize_card(card)
    assert summary.name and summary.interfaces and summary.protocol_versions
    assert all(skill.id for skill in summary.skills)
