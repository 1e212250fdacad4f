"""Properties over open-ended input: random JSON and randomly damaged cards of every flavor."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from registry.validation import RULES, summarize_card, validate_card
from registry.validation import limits as limits_module
from registry.validation.paths import child
from registry.validation.schema_validation import SCHEMA_VERSIONS, card_validator, read_schema_file, schema_issues
from tests.registry.validation import sample_cards
from tests.registry.validation.pointers import resolves_here_or_in_parent

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = st.sampled_from(
    [
        "name",
        "url",
        "id",
        "tags",
        "type",
        "schemes",
        "list",
        "a/b",
        "~x",
        "",
        "protocolVersion",
        "supportedInterfaces",
        "skills",
        "security",
        "securitySchemes",
    ]
) | st.text(max_size=6)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["JSONRPC", "GRPC", "text/plain", "https://a.example", "http://b", "grpc://c:1", "1.0", "0.3"])
)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=15
)
SMALL_JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=5
)
SAMPLES = [sample_cards.v01, sample_cards.v02, sample_cards.v03, sample_cards.v10, sample_cards.hybrid]


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, member in value.items():
            found += paths_of(member, prefix + (key,))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found += paths_of(member, prefix + (index,))
    return found


@st.composite
def damaged_cards(draw: st.DrawFn) -> dict[str, Any]:
    """A valid card of some flavor with a few members replaced by random JSON or deleted."""
    card = draw(st.sampled_from(SAMPLES))()
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(paths_of(card)[1:]))
        parent: Any = card
        for segment in target[:-1]:
            parent = parent[segment]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[target[-1]]
        else:
            parent[target[-1]] = draw(SMALL_JSON)
        if not paths_of(card)[1:]:
            break
    return card


def assert_well_formed(card: Any) -> None:
    before = copy.deepcopy(card)
    report = validate_card(card)
    assert card == before, "validation must not change the card"
    for issue in report.issues:
        assert issue.rule in RULES and issue.severity == RULES[issue.rule].severity
        assert issue.message
        assert resolves_here_or_in_parent(card, issue.path), issue
    assert report.valid is not any(i.severity == "error" for i in report.issues)
    json.dumps(report.to_dict())
    assert validate_card(card) == report, "the report must be deterministic"


@SETTINGS
@given(JSON)
def test_random_json_never_raises_and_every_issue_is_well_formed(value: Any) -> None:
    assert_well_formed(value)


@SETTINGS
@given(st.dictionaries(KEYS, SMALL_JSON, max_size=6))
def test_random_objects_never_raise(value: dict[str, Any]) -> None:
    assert_well_formed(value)
    summarize_card(value)


@SETTINGS
@given(damaged_cards())
def test_damaged_cards_never_raise_and_every_issue_is_well_formed(card: dict[str, Any]) -> None:
    assert_well_formed(card)
    summarize_card(card)


def plain_errors(document: dict[str, Any], card: Any) -> set[tuple[Any, ...]]:
    definitions_key = "definitions" if "definitions" in document else "$defs"
    schema = {**document, "$ref": f"#/{definitions_key}/AgentCard"}
    return {(tuple(e.absolute_path), e.validator, e.message) for e in Draft7Validator(schema).iter_errors(card)}


@settings(max_examples=100, deadline=None)
@given(damaged_cards(), st.sampled_from(SCHEMA_VERSIONS))
def test_compiled_schemas_find_exactly_what_plain_jsonschema_finds(card: dict[str, Any], version: str) -> None:
    """Inlining the references changes nothing: the errors equal those of a plain Draft7Validator
    on the official file with its $refs."""
    ours = {(tuple(e.absolute_path), e.validator, e.message) for e in card_validator(version).iter_errors(card)}
    assert ours == plain_errors(read_schema_file(f"a2a-v{version}.json"), card)
    schema_issues(card, version)


def values_below(value: Any, path: str = "", depth: int = 0) -> list[tuple[str, Any, int]]:
    found = [(path, value, depth)]
    if isinstance(value, dict):
        for key, member in value.items():
            found += values_below(member, child(path, key), depth + 1)
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found += values_below(member, child(path, index), depth + 1)
    return found


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(KEYS, JSON, max_size=4), st.integers(1, 4))
def test_limits_report_every_long_string_and_key_and_one_place_too_deep(card: dict[str, Any], max_depth: int) -> None:
    limits = limits_module.CardLimits(max_depth=max_depth, max_string_length=6)
    reported = limits_module.check_depth_and_strings(card, limits)
    values = values_below(card)
    too_long = [path for path, item, _ in values if isinstance(item, str) and len(item) > 6]
    too_long += [child(path, key) for path, item, _ in values if isinstance(item, dict) for key in item if len(key) > 6]
    assert sorted(i.path for i in reported if i.rule == "limit-string-length") == sorted(too_long)
    deep = [i.path for i in reported if i.rule == "limit-depth"]
    assert len(deep) == any(depth > max_depth for _, _, depth in values)
    assert all(depth == max_depth + 1 for path, _, depth in values if path in deep)
