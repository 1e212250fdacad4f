"""The validator against the verdicts of ../shared/testdata/cards/INDEX.json: 43 real cards from
the official A2A repositories (spec examples, samples, SDK and TCK fixtures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from registry.validation import validate_card

CARDS = Path(__file__).resolve().parents[3].parent / "shared" / "testdata" / "cards"
INDEX: list[dict[str, Any]] = json.loads((CARDS / "INDEX.json").read_text(encoding="utf-8"))["cards"]

# Verdicts that are policy, not fact. The policy, with its reason:
# - Hybrid cards (v1.0 + 0.3 compatibility fields) are judged by their v1.0 part, because the
#   v1.0 fields are what 1.x clients and this registry's index read; a broken 0.3 view only warns.
#   So "VALID as 0.3 / INVALID as 1.0" and "INVALID (1.0) / schema-valid 0.3" are INVALID.
HYBRID_POLICY = {"VALID as 0.3 / INVALID as 1.0": False, "INVALID (1.0) / schema-valid 0.3": False}
# - QUESTIONABLE cards, one by one (valid?, rules that must be reported):
QUESTIONABLE_POLICY: dict[str, tuple[bool, set[str]]] = {
    # A skill requirement names the undeclared scheme "oauth". OpenAPI 3.0, which the card's
    # `security` follows, says each name MUST be declared; a client cannot satisfy it: error.
    "a2a-dotnet__1.json": (False, {"security-scheme-undeclared", "media-type-invalid", "interface-completeness"}),
    # Same: skill security names "example", declared nowhere.
    "a2a-python__2.json": (False, {"security-scheme-undeclared"}),
    # Has `authentication` and no `protocolVersion`: a v0.1 card, and it passes the v0.1.0 schema;
    # the extra `contact` and plain-http URLs are worth telling, not refusing.
    "a2a-samples__9.json": (True, {"unknown-field", "url-insecure"}),
    # Passes the v0.2.0 schema it is judged by; using 1.0's capabilities.extendedAgentCard in a
    # 0.x card does nothing for its clients: warned, as is the missing protocolVersion.
    "a2a-samples__10.json": (True, {"protocol-version-missing", "foreign-version-field", "media-type-invalid"}),
}


def expected_validity(entry: dict[str, Any]) -> bool:
    verdict = entry["verdict"]
    if verdict in HYBRID_POLICY:
        return HYBRID_POLICY[verdict]
    if verdict == "QUESTIONABLE":
        return QUESTIONABLE_POLICY[entry["file"]][0]
    if verdict.startswith("VALID"):  # VALID, VALID (0.2.0), VALID (after fix), VALID (structure); …
        return True
    assert verdict.startswith("INVALID"), f"unknown verdict {verdict!r}: decide a policy for it"
    return False


def load(name: str) -> Any:
    return json.loads((CARDS / name).read_text(encoding="utf-8"))


def test_the_index_lists_every_card_file_and_more_than_40() -> None:
    files = {path.name for path in CARDS.glob("*.json")} - {"INDEX.json"}
    assert files == {entry["file"] for entry in INDEX}
    assert len(files) >= 40


@pytest.mark.parametrize("entry", INDEX, ids=[entry["file"] for entry in INDEX])
def test_verdict_agrees_with_the_index(entry: dict[str, Any]) -> None:
    report = validate_card(load(entry["file"]))
    assert report.valid is expected_validity(entry), [i.to_dict() for i in report.errors]


@pytest.mark.parametrize("name", sorted(QUESTIONABLE_POLICY))
def test_questionable_cards_report_what_makes_them_questionable(name: str) -> None:
    report = validate_card(load(name))
    assert QUESTIONABLE_POLICY[name][1] <= {issue.rule for issue in report.issues}


def test_every_questionable_card_has_a_policy() -> None:
    questionable = {entry["file"] for entry in INDEX if entry["verdict"] == "QUESTIONABLE"}
    assert questionable == set(QUESTIONABLE_POLICY)


@pytest.mark.parametrize(
    ("name", "flavor", "protocol_version"),
    [
        ("a2a-spec__1.json", "0.1", "0.1"),
        ("a2a-samples__1.json", "0.2", "0.2.0"),  # no protocolVersion: v0.2.0 schema
        ("a2a-spec__2.json", "0.2", "0.2.0"),
        ("a2a-java__2.json", "0.3", "0.2.9"),  # 0.2.9 is the 0.3 line: v0.3.0 schema
        ("a2a-python__3.json", "0.3", "0.3.0"),  # mutualTLS exists only in v0.3.0
        ("a2a-java__6.json", "1.0+0.3", "1.0"),
        ("a2a-python__8.json", "1.0+0.3", "1.0"),
        ("a2a-spec__6.json", "1.0", "1.0"),
        ("a2a-python__12.json", "1.0", "1.0"),  # v1.0 structure, interfaces speaking 0.3.0
        ("a2a-tck__1.json", None, None),
    ],
)
def test_detected_version(name: str, flavor: str | None, protocol_version: str | None) -> None:
    report = validate_card(load(name))
    assert (report.flavor, report.protocol_version) == (flavor, protocol_version)


def test_hybrid_invalid_as_1_0_says_why_in_1_0_terms() -> None:
    report = validate_card(load("a2a-python__14.json"))
    assert {(i.path, i.rule) for i in report.errors} >= {
        ("/description", "required-field-empty"),
        ("/version", "required-field-empty"),
        ("/skills", "required-field-empty"),
    }


def test_proto_field_names_get_a_hint() -> None:
    report = validate_card(load("a2a-python__7.json"))
    missing = next(i for i in report.errors if i.path == "/supportedInterfaces")
    assert "supported_interfaces" in missing.message
