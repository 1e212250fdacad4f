"""Fast checks are sound: where one says "valid", jsonschema agrees, on tricky schemas and values."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from registry.validation.fast_checks import compile_checks

SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer"},
    {"type": ["integer", "string"]},
    {"type": "boolean"},
    {"type": "null"},
    {"type": "string", "enum": ["a", "b"]},
    {"enum": [1, True, "x"]},  # no fast check: Python's 1 == True is not JSON's
    {"const": "apiKey", "type": "string"},
    {"type": "array", "items": {"type": "string"}},
    {"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}},
    {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "boolean"}}},
    {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    {"properties": {"a": {"type": "string"}}, "required": ["a"]},  # no type: non-objects pass
    {"anyOf": [{"type": "object", "required": ["type"], "properties": {"type": {"const": "http"}}},
               {"type": "string"}]},
    {"type": "number"},  # no fast check for numbers
]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, width=16)
    | st.sampled_from(["a", "b", "x", "http", "apiKey", "id", "type"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "id", "type"]), inner,
                                                                max_size=3),
    max_leaves=8,
)


CHECKS = [(Draft7Validator(schema), compile_checks(schema).get(id(schema))) for schema in SCHEMAS]


@settings(max_examples=200, deadline=None)
@given(case=st.sampled_from(CHECKS), value=VALUES)
def test_a_fast_check_never_accepts_what_jsonschema_rejects(case: tuple[Draft7Validator, Any], value: Any) -> None:
    validator, check = case
    if check is not None and check(value):
        assert validator.is_valid(value)


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "integer"}, True),
    ({"type": ["integer", "string"]}, False),
    ({"type": "object", "additionalProperties": False, "properties": {"a": {"type": "boolean"}}}, {"b": 1}),
    ({"type": "string", "enum": ["a"]}, ["a"]),
])
def test_known_traps(schema: dict[str, Any], value: Any) -> None:
    assert compile_checks(schema)[id(schema)](value) is False


def test_schemas_with_other_keywords_get_no_check() -> None:
    schema = {"type": "string", "maxLength": 3}
    assert id(schema) not in compile_checks(schema)
