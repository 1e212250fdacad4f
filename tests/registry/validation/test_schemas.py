"""The shipped schemas (package data), their provenance note, and the rule catalogue."""

from __future__ import annotations

import hashlib
import re
from importlib import resources

import pytest

from registry.validation import RULES
from registry.validation.field_table import ELEMENT_TYPES, field_table
from registry.validation.schema_validation import FIELD_TABLE_FILE, SCHEMA_VERSIONS, card_validator

SCHEMA_DIR = resources.files("registry.validation").joinpath("schemas")
SHIPPED = [f"a2a-v{version}.json" for version in SCHEMA_VERSIONS] + [FIELD_TABLE_FILE]


def test_sources_note_names_every_schema_with_its_checksum() -> None:
    sources = SCHEMA_DIR.joinpath("SOURCES.md").read_text(encoding="utf-8")
    for name in SHIPPED:
        digest = hashlib.sha256(SCHEMA_DIR.joinpath(name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in sources, f"{name} changed or is not listed in SOURCES.md"


@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_each_version_compiles_once(version: str) -> None:
    assert card_validator(version) is card_validator(version)


def test_field_table_element_types_cover_every_nested_field_of_the_card() -> None:
    table, seen, pending = field_table(), set(), ["AgentCard"]
    while pending:
        message = pending.pop()
        seen.add(message)
        for spec in table[message].values():
            if spec.kind in ("message", "repeated", "map"):
                assert spec.element is not None, f"{message}.{spec.name} has no element type"
                if spec.element in table and spec.element not in seen:
                    pending.append(spec.element)
    assert {message for message, _ in ELEMENT_TYPES} <= seen


def test_rule_ids_are_stable_kebab_case() -> None:
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule_id) for rule_id in RULES)
