"""The official A2A JSON Schemas (package data), compiled once per version into fast validators.

Each schema file holds the whole protocol; only the `AgentCard` definition and what it
references matter here. At load time the references are inlined and the annotation keywords
(`description`, `examples`, …) dropped, and the validator class is extended with a pruning
`properties`/`items`: a member whose subschema is a plain leaf (`{"type": "string"}`,
an array of strings, a string enum …) and whose value already matches is not descended into.
jsonschema descends through a fresh validator object per member, which makes a 3 KB card cost
over a millisecond; pruning only skips subtrees that are valid by construction, so every error,
and its path, is still found and reported by jsonschema itself.
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

SCHEMA_VERSIONS = ("0.1.0", "0.2.0", "0.2.5", "0.2.6", "0.3.0")
FIELD_TABLE_FILE = "a2a-v1.0-field-presence.json"

_ANNOTATIONS = frozenset({"description", "examples", "title", "default", "$comment"})
_NAME_MAPS = frozenset({"properties", "definitions", "$defs", "patternProperties"})  # keys there are names
_PYTHON_TYPES: dict[str, type] = {
    "string": str, "boolean": bool, "object": dict, "array": list, "null": type(None), "integer": int,
}

Check = Callable[[Any], bool]


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
    fast_checks = _compile_checks(schema)
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
    return {key: _strip_annotations(value, names=key in _NAME_MAPS)
            for key, value in node.items() if key not in _ANNOTATIONS}


def _compile_checks(schema: Any) -> dict[int, Check]:
    """Fast checks for every subschema that can have one, keyed by the subschema's id."""
    compiled: dict[int, Check | None] = {}
    stack = [schema]
    while stack:  # every subschema, so pruning finds checks below a node that has none itself
        node = stack.pop()
        if isinstance(node, dict):
            _compile(node, compiled)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return {key: check for key, check in compiled.items() if check is not None}


def _compile(schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    key = id(schema)
    if key not in compiled:
        compiled[key] = None  # provisional: a schema that reaches itself gets no fast check
        compiled[key] = _compile_node(schema, compiled)
    return compiled[key]


def _compile_node(schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    """A predicate that is True only where the schema accepts the value (False may be wrong: it
    just sends the value to jsonschema). Keywords outside `_FAST_KEYWORDS` mean no fast check."""
    if schema is True or schema == {}:
        return _accept_anything
    if not isinstance(schema, dict) or not schema.keys() <= _FAST_KEYWORDS:
        return None
    parts: list[Check] = []
    for keyword, value in schema.items():
        builder = _KEYWORD_BUILDERS.get(keyword)
        if builder is None:  # `format` only annotates: jsonschema asserts it only with a format checker
            continue
        part = builder(value, schema, compiled)
        if part is None:
            return None
        parts.append(part)
    return parts[0] if len(parts) == 1 else _all_of_checks(parts)


def _accept_anything(value: Any) -> bool:
    return True


def _all_of_checks(parts: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for part in parts:
            if not part(value):
                return False
        return True

    return check


def _type_check(name: Any, schema: Any, compiled: Any) -> Check | None:
    names = name if isinstance(name, list) else [name]
    if not all(isinstance(n, str) and n in _PYTHON_TYPES for n in names):
        return None
    python_types = tuple(_PYTHON_TYPES[n] for n in names)
    allows_bool = "boolean" in names
    # `bool` is an `int` in Python but never a JSON number; jsonschema agrees.
    return lambda value: isinstance(value, python_types) and (allows_bool or not isinstance(value, bool))


def _properties_check(properties: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    members = [(name, _compile(sub, compiled)) for name, sub in properties.items()]
    if any(check is None for _, check in members):
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name, member_check in members:
            if name in value and not member_check(value[name]):  # type: ignore[misc]
                return False
        return True

    return check


def _required_check(names: Any, schema: Any, compiled: Any) -> Check:
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _additional_check(additional: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    declared = frozenset(schema.get("properties", {}))
    extra_check = _compile(additional, compiled) if additional is not False else None
    if additional is not False and extra_check is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        extras = [key for key in value if key not in declared]
        if additional is False:
            return not extras
        return all(extra_check(value[key]) for key in extras)  # type: ignore[misc]

    return check


def _items_check(items: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    item_check = _compile(items, compiled) if isinstance(items, dict) else None
    if item_check is None:
        return None
    return lambda value: not isinstance(value, list) or all(item_check(item) for item in value)


def _enum_check(allowed: Any, schema: Any, compiled: Any) -> Check | None:
    # Only string enums: jsonschema's equality differs from Python's for 1/True and 1/1.0.
    if not all(isinstance(option, str) for option in allowed):
        return None
    options = frozenset(allowed)
    return lambda value: isinstance(value, str) and value in options


def _const_check(constant: Any, schema: Any, compiled: Any) -> Check | None:
    return _enum_check([constant], schema, compiled)


def _any_of_check(variants: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    # A variant without a fast check is skipped: the worst case is a needless jsonschema pass.
    checks = [check for check in (_compile(variant, compiled) for variant in variants) if check is not None]
    if not checks:
        return None
    return lambda value: any(check(value) for check in checks)


_KEYWORD_BUILDERS: dict[str, Callable[[Any, Any, dict[int, Check | None]], Check | None]] = {
    "type": _type_check,
    "properties": _properties_check,
    "required": _required_check,
    "additionalProperties": _additional_check,
    "items": _items_check,
    "enum": _enum_check,
    "const": _const_check,
    "anyOf": _any_of_check,
}
_FAST_KEYWORDS = frozenset(_KEYWORD_BUILDERS) | {"format"}


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
