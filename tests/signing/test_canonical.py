"""The canonical forms: the spec's worked example, version detection on real cards, what each
form keeps and drops, and properties (idempotent, independent of key order)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signing import (
    CanonicalForm,
    CanonicalizationError,
    CardFormatError,
    canonical_payload,
    canonicalize,
    detect_schema,
)
from tests.signing.cards import hybrid, rich_card, v1_cards
from tests.signing.conftest import TESTDATA, load_json, real_cards

SPEC_EXAMPLE = {
    "name": "Example Agent",
    "description": "",
    "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []},
    "skills": [],
}


def test_strict_form_reproduces_the_spec_worked_example() -> None:
    # A2A §8.4.1 "Example of Default Value Removal", expected output verbatim.
    expected = b'{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}'
    assert canonicalize(SPEC_EXAMPLE, "strict") == expected
    assert canonicalize(load_json(TESTDATA / "cards" / "a2a-spec__8.json"), CanonicalForm.STRICT) == expected


def test_sdk_form_removes_empties_but_keeps_false() -> None:
    assert (
        canonicalize(SPEC_EXAMPLE)
        == b'{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}'
    )


def test_plain_form_is_the_card_without_signatures() -> None:
    card = {**SPEC_EXAMPLE, "x": None, "signatures": [{"protected": "e30", "signature": ""}]}
    assert (
        canonicalize(card, "plain")
        == json.dumps(
            {k: v for k, v in card.items() if k != "signatures"}, sort_keys=True, separators=(",", ":")
        ).encode()
    )


def test_signatures_are_never_covered_nor_reported() -> None:
    card = rich_card()
    signed = {**card, "signatures": [{"protected": "x", "signature": "y"}]}
    for form in CanonicalForm:
        assert canonical_payload(signed, form) == canonical_payload(card, form)


@pytest.mark.parametrize(
    "file,version",
    [
        ("a2a-python__12.json", "1.0"),
        ("a2a-python__8.json", "1.0"),
        ("a2a-python__7.json", "1.0"),
        ("a2a-spec__5.json", "0.3.0"),
        ("a2a-java__2.json", "0.3.0"),
        ("a2a-samples__1.json", "0.2.0"),
        ("a2a-spec__1.json", "0.1.0"),
        ("a2a-spec__3.json", "0.3.0"),
        ("a2a-spec__8.json", "1.0"),
    ],
)
def test_protocol_version_detection_on_real_cards(file: str, version: str) -> None:
    assert detect_schema(load_json(TESTDATA / "cards" / file)).version == version


@pytest.mark.parametrize(
    "declared,version",
    [
        ("0.2.0", "0.2.0"),
        ("0.2.4", "0.2.0"),
        ("0.2.5", "0.2.5"),
        ("0.2.6", "0.2.6"),
        ("0.2.9", "0.3.0"),
        ("0.3.0", "0.3.0"),
        ("0.3.7", "0.3.0"),
        ("1.0", "1.0"),
        ("1.2.0", "1.0"),
        ("0.1", "0.1.0"),
        ("garbage", "0.3.0"),
    ],
)
def test_protocol_version_mapping(declared: str, version: str) -> None:
    assert detect_schema({"protocolVersion": declared, "url": "https://a"}).version == version


@pytest.mark.parametrize("file,card", real_cards(), ids=[name for name, _ in real_cards()])
def test_every_real_card_canonicalizes_in_every_form(file: str, card: dict[str, Any]) -> None:
    for form in CanonicalForm:
        payload = canonical_payload(card, form)
        assert json.loads(payload.data) is not None
        assert canonicalize(json.loads(payload.data), form) == payload.data or form is not CanonicalForm.PLAIN


def test_hybrid_card_is_reduced_to_its_v1_fields_and_reports_the_rest() -> None:
    card = rich_card()
    served = hybrid(card)
    payload = canonical_payload(served)
    assert payload.schema_version == "1.0"
    assert payload.data == canonicalize(card)
    assert set(payload.uncovered) == {"/url", "/preferredTransport", "/protocolVersion", "/security", "/x_vendor"}
    assert canonical_payload(served, "plain").uncovered == ()


def test_unknown_nested_fields_are_dropped_with_json_pointers() -> None:
    card = rich_card(1)
    card["skills"][0]["a/b~c"] = "x"
    card["capabilities"]["extensions"][0]["vendor"] = {"k": 1}
    card["skills"][0]["empty"] = ""
    uncovered = canonical_payload(card).uncovered
    assert set(uncovered) == {"/skills/0/a~1b~0c", "/capabilities/extensions/0/vendor"}


def test_v1_proto_field_names_are_accepted() -> None:
    snake = {
        "name": "n",
        "supported_interfaces": [{"url": "u", "protocol_binding": "JSONRPC"}],
        "default_input_modes": ["text/plain"],
    }
    camel = {
        "name": "n",
        "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
        "defaultInputModes": ["text/plain"],
    }
    assert canonicalize(snake) == canonicalize(camel)
    assert canonical_payload(snake).uncovered == ()


def test_v1_defaults_follow_protojson_presence() -> None:
    card = {
        "supportedInterfaces": [],
        "capabilities": {"streaming": False, "extensions": [{"uri": "u", "required": False}]},
        "securitySchemes": {
            "o": {
                "oauth2SecurityScheme": {
                    "flows": {"authorizationCode": {"authorizationUrl": "a", "tokenUrl": "t", "pkceRequired": False}}
                }
            }
        },
    }
    sdk = json.loads(canonicalize(card))
    assert sdk["capabilities"] == {"streaming": False, "extensions": [{"uri": "u"}]}  # `required` has no presence
    assert "pkceRequired" not in json.dumps(sdk)
    strict = json.loads(canonicalize(card, "strict"))
    assert "required" not in json.dumps(strict) and strict["capabilities"]["streaming"] is False


def test_struct_numbers_are_doubles_in_v1_cards() -> None:
    card = {
        "supportedInterfaces": [],
        "capabilities": {"extensions": [{"uri": "u", "params": {"big": 2**60, "f": 1.0}}]},
    }
    assert b'"big":1152921504606847000' in canonicalize(card)
    assert b'"f":1}' in canonicalize(card)
    with pytest.raises(CanonicalizationError):
        canonicalize(card, "plain")  # as plain JSON, 2**60 has no interoperable form


def test_v0_security_schemes_are_reduced_by_their_type() -> None:
    card = {
        "protocolVersion": "0.3.0",
        "url": "https://a",
        "securitySchemes": {
            "k": {"type": "apiKey", "in": "header", "name": "X", "flows": {"x": 1}},
            "o": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "a", "scopes": {}}}, "in": "query"},
        },
    }
    payload = canonical_payload(card)
    assert set(payload.uncovered) == {"/securitySchemes/k/flows", "/securitySchemes/o/in"}


@pytest.mark.parametrize("bad", [[], "card", 3, None])
def test_non_objects_are_refused(bad: Any) -> None:
    with pytest.raises(CardFormatError):
        canonicalize(bad)


@pytest.mark.parametrize("bad", [{"name": float("inf")}, {"name": "\udc00"}, {"skills": [{"id": object()}]}])
def test_values_without_a_canonical_form_raise_a_typed_error(bad: dict[str, Any]) -> None:
    for form in CanonicalForm:
        with pytest.raises(CanonicalizationError):
            canonicalize(bad, form)


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@settings(max_examples=60, deadline=None)
@given(v1_cards(), st.sampled_from(list(CanonicalForm)), st.randoms(use_true_random=False))
def test_canonicalization_is_idempotent_and_ignores_key_order(
    card: dict[str, Any], form: CanonicalForm, rng: random.Random
) -> None:
    data = canonicalize(card, form)
    assert canonicalize(_shuffled(copy.deepcopy(card), rng), form) == data
    # Integers of 2**53 and beyond in canonical text are doubles (JSON numbers): parse them so.
    reparsed = json.loads(data, parse_int=lambda text: int(text) if abs(int(text)) < 2**53 else float(text))
    assert canonicalize(reparsed, form) == data
