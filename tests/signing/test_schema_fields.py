"""The committed field tables match their official sources: the v0.x JSON Schemas and the v1.0
descriptors of a2a-sdk (and through them, `a2a-v1.0-field-presence.json`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signing import _generate_schema_fields, schema_fields
from tests.signing.conftest import SHARED, load_json

SCHEMAS = SHARED / "a2a" / "schemas"


def test_generated_tables_are_up_to_date() -> None:
    committed = Path(schema_fields.__file__).read_text(encoding="utf-8")
    assert _generate_schema_fields.render(SCHEMAS) == committed, (
        "regenerate: python -m signing._generate_schema_fields ../shared/a2a/schemas > signing/schema_fields.py"
    )


def test_v1_flags_agree_with_the_field_presence_table() -> None:
    presence = load_json(SCHEMAS / "a2a-v1.0-field-presence.json")
    for message, fields in schema_fields.V1_0_MESSAGES.items():
        assert set(fields) == set(presence[message]), message
        for name, shape in fields.items():
            entry = presence[message][name]
            assert ("!" in shape) is entry["required"], f"{message}.{name}"
            if entry["kind"] in ("string", "bool"):
                assert ("?" in shape) is entry["proto3_optional"], f"{message}.{name}"


@pytest.mark.parametrize("version", schema_fields.V0_MESSAGES)
def test_v0_agent_card_fields_match_the_json_schema(version: str) -> None:
    schema = load_json(SCHEMAS / f"a2a-v{version}.json")
    definitions = schema.get("definitions") or schema["$defs"]
    assert set(schema_fields.V0_MESSAGES[version]["AgentCard"]) == set(definitions["AgentCard"]["properties"])
