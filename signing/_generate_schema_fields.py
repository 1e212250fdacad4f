"""Developer tool: regenerate `signing/schema_fields.py` from the official sources.

    python -m signing._generate_schema_fields SCHEMA_DIR > signing/schema_fields.py

SCHEMA_DIR holds the official A2A v0.x JSON Schemas (`a2a-v0.3.0.json`, ...). The v1.0
tables are read off the protobuf descriptors of the official `a2a-sdk` (the same source
as `a2a-v1.0-field-presence.json`), so this tool needs the test extra installed. The
library itself never imports this module; `tests/signing/test_schema_fields.py` checks
that the committed tables still match both sources.
"""

from __future__ import annotations

import json
import pathlib
import pprint
import sys
from typing import Any

V0_SCHEMAS = ("0.1.0", "0.2.0", "0.2.5", "0.2.6", "0.3.0")
SCALAR_TYPES = {"string", "boolean", "integer", "number", "null"}


def v1_tables() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Messages reachable from lf.a2a.v1.AgentCard as (fields, snake_case aliases)."""
    from a2a.types import a2a_pb2
    from google.api import field_behavior_pb2

    messages: dict[str, dict[str, str]] = {}
    aliases: dict[str, dict[str, str]] = {}
    pending = [a2a_pb2.AgentCard.DESCRIPTOR]
    while pending:
        descriptor = pending.pop()
        if descriptor.name in messages:
            continue
        fields: dict[str, str] = {}
        for field in descriptor.fields:
            behaviors = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
            flags = ("!" if field_behavior_pb2.REQUIRED in behaviors else "") + (
                "?" if field.has_presence and field.message_type is None else ""
            )
            fields[field.json_name] = _proto_shape(field, pending) + flags
            if field.name != field.json_name:
                aliases.setdefault(descriptor.name, {})[field.name] = field.json_name
        messages[descriptor.name] = fields
    return messages, aliases


def _proto_shape(field: Any, pending: list[Any]) -> str:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        return "{" + _proto_shape(message.fields_by_name["value"], pending)
    prefix = "[" if field.is_repeated else ""
    if message is None:
        return prefix + "s"
    if message.full_name.startswith("google.protobuf."):
        return prefix + "o"  # Struct / Value: free-form JSON
    pending.append(message)
    return prefix + "m:" + message.name


def v0_tables(schema: dict[str, Any]) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """Messages reachable from AgentCard in one v0.x JSON Schema, plus discriminated unions."""
    definitions = schema.get("definitions") or schema["$defs"]
    messages: dict[str, dict[str, str]] = {}
    unions: dict[str, Any] = {}
    pending = ["AgentCard"]
    while pending:
        name = pending.pop()
        if name in messages or name in unions:
            continue
        definition = definitions[name]
        alternatives = definition.get("anyOf") or definition.get("oneOf")
        if alternatives:
            unions[name] = _union(alternatives, definitions, pending)
            continue
        props = definition.get("properties", {})
        messages[name] = {key: _json_shape(value, definitions, pending) for key, value in props.items()}
    return messages, unions


def _union(alternatives: list[dict[str, Any]], definitions: dict[str, Any], pending: list[str]) -> dict[str, str]:
    by_type: dict[str, str] = {}
    for alternative in alternatives:
        target = alternative["$ref"].rsplit("/", 1)[1]
        by_type[definitions[target]["properties"]["type"]["const"]] = target
        pending.append(target)
    return by_type


def _json_shape(schema: dict[str, Any], definitions: dict[str, Any], pending: list[str]) -> str:
    if "$ref" in schema:
        target = schema["$ref"].rsplit("/", 1)[1]
        definition = definitions[target]
        if "properties" in definition or "anyOf" in definition or "oneOf" in definition:
            pending.append(target)
            return ("u:" if "properties" not in definition else "m:") + target
        return "s"
    kind = schema.get("type")
    if kind == "array":
        return "[" + _json_shape(schema.get("items", {}), definitions, pending)
    if kind == "object" and "properties" not in schema:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra and "additionalProperties" not in extra:
            return "{" + _json_shape(extra, definitions, pending)
        return "o"
    if kind in SCALAR_TYPES or "enum" in schema or "const" in schema:
        return "s"
    return "o"


def render(schema_dir: pathlib.Path) -> str:
    """The text of `signing/schema_fields.py`."""
    v1_messages, v1_aliases = v1_tables()
    out = [
        '"""Field tables of the A2A Agent Card schemas (GENERATED; do not edit).',
        "",
        "Regenerate with `python -m signing._generate_schema_fields SCHEMA_DIR`. Shapes:",
        '"s" scalar, "o" free-form JSON, "m:X" message X, "u:X" union X (v0.x security',
        'schemes, discriminated by "type"), "[" list of, "{" map of; suffix "!" REQUIRED,',
        '"?" explicit presence (proto3 `optional`).',
        '"""',
        "",
        "# fmt: off",
        f"V1_0_MESSAGES = {pprint.pformat(v1_messages, width=100, sort_dicts=True)}",
        "",
        f"V1_0_ALIASES = {pprint.pformat(v1_aliases, width=100, sort_dicts=True)}",
        "",
        "V0_MESSAGES = {",
    ]
    unions_by_version = {}
    for version in V0_SCHEMAS:
        schema = json.loads((schema_dir / f"a2a-v{version}.json").read_text(encoding="utf-8"))
        messages, unions = v0_tables(schema)
        unions_by_version[version] = unions
        out.append(f"    {version!r}: {pprint.pformat(messages, width=96, sort_dicts=True, indent=4)},")
    out += ["}", "", f"V0_UNIONS = {pprint.pformat(unions_by_version, width=100, sort_dicts=True)}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render(pathlib.Path(sys.argv[1])))
