"""The official A2A JSON Schemas (package data), compiled once per version into fast validators.

Each schema file holds the whole protocol; only the `AgentCard` definition and what it
references matter here. At load time the references are inlined and the annotation keywords
(`description`, `examples`, …) dropped. Then two speed-ups, neither of which changes a result:
- the whole card first meets its fast check (`fast_checks`): when that passes, the card is
  valid and jsonschema is not run at all — the common case on the registration path;
- otherwise jsonschema runs with pruning `properties`/`items` keywords: a member whose
  subschema has a fast check that passes is not descended into (jsonschema builds a fresh
  validator object per member, which made a 3 KB card cost over a millisecond here), so every
  error, and its path, is still found and worded by jsonschema itself.
A property test compares the errors with those of a plain validator on the official files.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema
from jsonschema import validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from registry.validation.fast_checks import Check, compile_checks

SCHEMA_VERSIONS = ("0.1.0", "0.2.0", "0.2.5", "0.2.6", "0.3.0")
FIELD_TABLE_FILE = "a2a-v1.0-field-presence.json"

_ANNOTATIONS = frozenset({"description", "examples", "title", "default", "$comment"})
_NAME_MAPS = frozenset({"properties", "definitions", "$defs", "patternProperties"})  # keys there are names


def read_schema_file(name: str) -> Any:
    """Parse one file of `registry/validation/schemas/` (package data, so it works from a wheel)."""
    text = resources.files("registry.validation").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def card_schema(version: str) -> dict[str, Any]:
    """The self-contained AgentCard schema of one version: references inlined, annotations dropped."""
    document = read_schema_file(f"a2a-v{version}.json")
    definitions = document.get("definitions") or document.get("$defs") or {}
    return _strip_annotations(_inline(definitions["AgentCard"], definitions, ("AgentCard",)))


@dataclass(frozen=True)
class CompiledCardSchema:
    """A validator for one version's AgentCard schema plus the fast check of the whole card."""

    version: str
    validator: Validator
    fast_check: Check | None

    def iter_errors(self, card: Any) -> Iterator[ValidationError]:
        if self.fast_check is not None and self.fast_check(card):
            return iter(())
        return self.validator.iter_errors(card)


@functools.cache
def card_validator(version: str) -> CompiledCardSchema:
    """The compiled validator for `card_schema(version)`, built once per process and version."""
    schema = card_schema(version)
    fast_checks = compile_checks(schema)
    pruning_class = validators.extend(
        jsonschema.Draft7Validator,
        {"properties": _pruning_properties(fast_checks), "items": _pruning_items(fast_checks)},
    )
    # The validator keeps `schema` alive, which keeps the ids in `fast_checks` valid.
    return CompiledCardSchema(version, pruning_class(schema), fast_checks.get(id(schema)))


def card_properties(version: str) -> frozenset[str]:
    """Top-level field names the schema of `version` defines."""
    return frozenset(card_schema(version).get("properties", {}))


def _inline(node: Any, definitions: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, stack) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith(("#/definitions/", "#/$defs/")):
        name = reference.rsplit("/", 1)[1]
        if name in stack:  # a recursive type: no A2A AgentCard has one, but never loop forever
            raise ValueError(f"recursive schema reference {name!r} cannot be inlined")
        # Draft 7 ignores the siblings of `$ref`, so replacing the node is exact.
        return _inline(definitions[name], definitions, stack + (name,))
    return {key: _inline(value, definitions, stack) for key, value in node.items()}


def _strip_annotations(node: Any, names: bool = False) -> Any:
    if isinstance(node, list):
        return [_strip_annotations(item) for item in node]
    if not isinstance(node, dict):
        return node
    if names:  # a map of property names to subschemas: every key is kept
        return {key: _strip_annotations(value) for key, value in node.items()}
    return {
        key: _strip_annotations(value, names=key in _NAME_MAPS)
        for key, value in node.items()
        if key not in _ANNOTATIONS
    }


def _pruning_properties(fast_checks: dict[int, Check]) -> Callable[..., Iterator[Any]]:
    def properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not isinstance(instance, dict):
            return
        for name, subschema in properties.items():
            if name in instance:
                value = instance[name]
                check = fast_checks.get(id(subschema))
                if check is not None and check(value):
                    continue
                yield from validator.descend(value, subschema, path=name, schema_path=name)

    return properties


def _pruning_items(fast_checks: dict[int, Check]) -> Callable[..., Iterator[Any]]:
    original = jsonschema.Draft7Validator.VALIDATORS["items"]

    def items(validator: Any, items: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not isinstance(items, dict) or not isinstance(instance, list):
            yield from original(validator, items, instance, schema)
            return
        check = fast_checks.get(id(items))
        for index, item in enumerate(instance):
            if check is not None and check(item):
                continue
            yield from validator.descend(item, items, path=index)

    return items
