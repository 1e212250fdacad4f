"""The official A2A JSON Schemas of 0.x (package data) and the issues a card has against them."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from registry.validation.paths import child, pointer
from registry.validation.report import Issue, make_issue, unique_in_order

SCHEMA_VERSIONS = ("0.1.0", "0.2.0", "0.2.5", "0.2.6", "0.3.0")
FIELD_TABLE_FILE = "a2a-v1.0-field-presence.json"
_MAX_QUOTED = 80  # jsonschema messages quote whole instances; keep ours short and to the point
_JSON_TYPE_NAMES: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}


def read_schema_file(name: str) -> Any:
    """Parse one file of `registry/validation/schemas/` (package data, so it works from a wheel)."""
    text = resources.files("registry.validation").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def card_schema(version: str) -> dict[str, Any]:
    """The AgentCard schema of one version with its references inlined, so that the variants of a
    union can be read directly (see `_variant_issues`)."""
    document = read_schema_file(f"a2a-v{version}.json")
    definitions = document.get("definitions") or document.get("$defs") or {}
    return {"$schema": document["$schema"], **_inline(definitions["AgentCard"], definitions, ("AgentCard",))}


@functools.cache
def card_validator(version: str) -> Validator:
    """The validator of `card_schema(version)`, built once per process and version."""
    schema = card_schema(version)
    return validator_for(schema)(schema)


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
        if name in stack:  # no A2A AgentCard is recursive, but never loop forever
            raise ValueError(f"recursive schema reference {name!r} cannot be inlined")
        return _inline(definitions[name], definitions, stack + (name,))  # Draft 7 ignores $ref's siblings
    return {key: _inline(value, definitions, stack) for key, value in node.items()}


def schema_issues(card: dict[str, Any], version: str) -> list[Issue]:
    """Every violation of the v`version` AgentCard schema, with JSON-pointer paths."""
    errors = card_validator(version).iter_errors(card)
    return unique_in_order(issue for error in errors for issue in issues_for_error(error, version))


def compat_schema_issues(card: dict[str, Any], version: str) -> list[Issue]:
    """The same check for a hybrid's 0.3 view, reported as warnings: the v1.0 part decides validity,
    but a 0.3 client reading these fields may still fail on them."""
    return [
        make_issue(
            "compat-schema", issue.path, f"0.3 compatibility view: {issue.message}; 0.3 clients may reject this card"
        )
        for issue in schema_issues(card, version)
    ]


def json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def issues_for_error(error: ValidationError, version: str) -> Iterator[Issue]:
    """The issues one jsonschema error stands for (one `required` error can name several fields)."""
    path = pointer(*error.absolute_path)
    keyword = error.validator
    # Typed "maybe unset" because a hand-made error may lack them; iter_errors always sets them.
    value: Any = error.validator_value
    if keyword == "required":
        yield from _missing_fields(error, path, version)
    elif keyword == "type":
        names = " or ".join(value) if isinstance(value, list) else value
        yield make_issue(
            "wrong-type",
            path,
            f"must be {_article(names)} (A2A v{version} schema), not {json_type_name(error.instance)}",
        )
    elif keyword in ("enum", "const"):
        allowed = value if keyword == "enum" else [value]
        yield make_issue(
            "value-not-allowed",
            path,
            f"{_quote(error.instance)} is not allowed here; A2A v{version} accepts {_one_of(allowed)}",
        )
    elif keyword in ("anyOf", "oneOf"):
        yield from _variant_issues(error, path, version)
    else:
        yield make_issue("schema-violation", path, f"{_shorten(error.message, 200)} (A2A v{version} schema)")


def _missing_fields(error: ValidationError, path: str, version: str) -> Iterator[Issue]:
    # jsonschema raises one error per missing name; each yields all of them and the report
    # drops the repeats, which avoids parsing names back out of jsonschema's messages.
    present = error.instance if isinstance(error.instance, dict) else {}
    names: Any = error.validator_value  # set by iter_errors (see issues_for_error)
    for name in names:
        if name not in present:
            yield make_issue(
                "required-field-missing",
                child(path, name),
                f"required field `{name}` is missing (A2A v{version} schema)",
            )


def _variant_issues(error: ValidationError, path: str, version: str) -> Iterator[Issue]:
    """A union such as SecurityScheme: report the errors of the variant the `type` field picks,
    or what `type` may be, instead of jsonschema's 'not valid under any of the given schemas'."""
    variants: Any = error.validator_value  # set by iter_errors (see issues_for_error)
    discriminators = [kind for kind in map(_discriminator, variants) if kind]
    if not isinstance(error.instance, dict) and all(_is_object_schema(variant) for variant in variants):
        yield make_issue(
            "wrong-type", path, f"must be an object (A2A v{version} schema), not {json_type_name(error.instance)}"
        )
        return
    if isinstance(error.instance, dict) and len(discriminators) == len(variants):
        chosen = error.instance.get("type")
        if chosen not in discriminators:
            yield from _bad_discriminator(error.instance, path, discriminators, version)
            return
        branch = discriminators.index(chosen)
        for sub_error in error.context or ():
            if sub_error.relative_schema_path and sub_error.relative_schema_path[0] == branch:
                yield from issues_for_error(sub_error, version)
        return
    yield make_issue(
        "no-matching-variant",
        path,
        f"matches none of the {len(variants)} allowed shapes (A2A v{version} schema): {_shorten(error.message, 200)}",
    )


def _bad_discriminator(instance: dict[str, Any], path: str, kinds: list[str], version: str) -> Iterator[Issue]:
    if "type" not in instance:
        yield make_issue(
            "required-field-missing",
            child(path, "type"),
            f"required field `type` is missing; A2A v{version} accepts {_one_of(kinds)}",
        )
    else:
        yield make_issue(
            "value-not-allowed",
            child(path, "type"),
            f"{_quote(instance['type'])} is not allowed here; A2A v{version} accepts {_one_of(kinds)}",
        )


def _discriminator(variant: Any) -> str | None:
    """The `type` constant that names a union member (e.g. "apiKey"), if it has one."""
    if not isinstance(variant, dict):
        return None
    type_schema = variant.get("properties", {}).get("type", {})
    value = type_schema.get("const") if isinstance(type_schema, dict) else None
    return value if isinstance(value, str) else None


def _is_object_schema(variant: Any) -> bool:
    return isinstance(variant, dict) and variant.get("type") == "object"


def _article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _one_of(values: list[Any]) -> str:
    return ", ".join(_quote(value) for value in values)


def _quote(value: Any) -> str:
    return _shorten(repr(value) if not isinstance(value, str) else f'"{value}"')


def _shorten(text: str, limit: int = _MAX_QUOTED) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
