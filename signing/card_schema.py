"""Which fields a card's protocol version defines: compiled field tables and version detection.

The tables (`schema_fields.py`) are generated from the official schemas: the v1.0 protobuf
descriptors of `a2a-sdk` and the v0.x JSON Schemas. Here they become linked `MessageSpec`
objects once, at import, so canonicalisation is a walk with dictionary lookups.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from signing import schema_fields


class Kind(enum.IntEnum):
    """What a field holds."""

    SCALAR = 0  # string, bool or number
    OPEN = 1  # free-form JSON (protobuf Struct/Value, schemaless objects)
    MESSAGE = 2
    LIST = 3
    MAP = 4


@dataclass(eq=False, slots=True)
class Shape:
    """The shape of a value: a kind plus, for messages, the spec, and for lists/maps, the item."""

    kind: Kind
    message: MessageSpec | None = None
    item: Shape | None = None


@dataclass(eq=False, slots=True)
class FieldSpec:
    """One field: its JSON name, shape and presence flags (v1.0: REQUIRED, proto3 `optional`).

    `omit_default_sdk`/`omit_default_strict`: whether a value equal to the field's default
    ("", false, 0, empty list or map) is left out of that canonical form. ProtoJSON (what
    a2a-sdk's MessageToDict writes) omits defaults of fields without presence; the spec text
    (A2A §8.4.1) keeps them for REQUIRED and `optional` fields. A message that is present is
    never at its default (OPEN is a protobuf Struct in v1.0). v0.x has no defaults.
    """

    name: str
    shape: Shape
    required: bool = False
    presence: bool = False
    omit_default_sdk: bool = False
    omit_default_strict: bool = False

    def with_proto_defaults(self) -> FieldSpec:
        """This field under ProtoJSON default-value rules."""
        if self.shape.kind in (Kind.MESSAGE, Kind.OPEN):
            return self
        self.omit_default_sdk = not self.presence
        self.omit_default_strict = not (self.presence or self.required)
        return self


@dataclass(eq=False, slots=True)
class MessageSpec:
    """A message's fields by every accepted input name (JSON name and, for v1.0, proto name).

    `discriminator`/`variants` choose a more specific message by a member's value (the v0.x
    security scheme union, by `type`); `fields` is then the union of all variants' fields.
    """

    name: str
    fields: dict[str, FieldSpec] = field(default_factory=dict)
    discriminator: str | None = None
    variants: dict[str, MessageSpec] = field(default_factory=dict)

    def variant(self, obj: Mapping[str, Any]) -> MessageSpec:
        """The variant `obj` selects by its discriminator, else this (union) message."""
        if self.discriminator is None:
            return self
        chosen = obj.get(self.discriminator)
        return self.variants.get(chosen, self) if isinstance(chosen, str) else self


@dataclass(frozen=True, eq=False)
class CardSchema:
    """The field tree of one protocol version. `proto` marks ProtoJSON semantics (v1.0)."""

    version: str
    root: MessageSpec
    proto: bool


_SHAPE = re.compile(r"^(?P<shape>[\[{]*(?:s|o|[mu]:\w+))(?P<flags>[!?]*)$")


def _parse_shape(text: str, messages: dict[str, MessageSpec]) -> Shape:
    if text[0] == "[":
        return Shape(Kind.LIST, item=_parse_shape(text[1:], messages))
    if text[0] == "{":
        return Shape(Kind.MAP, item=_parse_shape(text[1:], messages))
    if text in ("s", "o"):
        return Shape(Kind.SCALAR if text == "s" else Kind.OPEN)
    return Shape(Kind.MESSAGE, message=messages[text[2:]])


def _compile(
    version: str,
    tables: dict[str, dict[str, str]],
    aliases: dict[str, dict[str, str]],
    unions: dict[str, dict[str, str]],
    proto: bool,
) -> CardSchema:
    messages = {name: MessageSpec(name) for name in [*tables, *unions]}
    for name, table in tables.items():
        for json_name, text in table.items():
            match = _SHAPE.match(text)
            assert match, f"bad shape {text!r} in {name}.{json_name}"
            flags = match["flags"]
            spec = FieldSpec(json_name, _parse_shape(match["shape"], messages), "!" in flags, "?" in flags)
            messages[name].fields[json_name] = spec.with_proto_defaults() if proto else spec
        for proto_name, json_name in aliases.get(name, {}).items():
            messages[name].fields[proto_name] = messages[name].fields[json_name]
    for name, by_type in unions.items():
        union = messages[name]
        union.discriminator = "type"
        union.variants = {value: messages[target] for value, target in by_type.items()}
        for variant in union.variants.values():
            union.fields.update(variant.fields)
    return CardSchema(version, messages["AgentCard"], proto)


V1_0 = _compile("1.0", schema_fields.V1_0_MESSAGES, schema_fields.V1_0_ALIASES, {}, proto=True)
V0_SCHEMAS: dict[str, CardSchema] = {
    version: _compile(version, tables, {}, schema_fields.V0_UNIONS[version], proto=False)
    for version, tables in schema_fields.V0_MESSAGES.items()
}
SCHEMAS: dict[str, CardSchema] = {"1.0": V1_0, **V0_SCHEMAS}

_VERSION = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def detect_schema(card: Mapping[str, Any]) -> CardSchema:
    """The schema of the protocol version `card` targets.

    v1.0 when it has `supportedInterfaces` (so a v1.0 card served with 0.3 compatibility
    fields is a v1.0 card) or a protocolVersion >= 1; for 0.x, the schema of its
    protocolVersion. Without either: 0.1.0 if it has `authentication`, 0.2.0 if it has a
    top-level `url` (both required there), else v1.0, the current version (the spec's
    §8.4.1 worked example is such a fragment).
    """
    if "supportedInterfaces" in card or "supported_interfaces" in card:
        return V1_0
    declared = card.get("protocolVersion")
    if isinstance(declared, str):
        return _schema_for_version(declared)
    if "authentication" in card:
        return V0_SCHEMAS["0.1.0"]
    return V0_SCHEMAS["0.2.0"] if "url" in card else V1_0


def _schema_for_version(declared: str) -> CardSchema:
    match = _VERSION.match(declared)
    if match is None:
        return V0_SCHEMAS["0.3.0"]
    version = tuple(int(part or 0) for part in match.groups())
    if version >= (1, 0, 0):
        return V1_0
    if (0, 2, 6) < version < (0, 3, 0):
        # "0.2.7".."0.2.9" label 0.3 pre-releases (the v0.3.0 spec's own sample says 0.2.9).
        return V0_SCHEMAS["0.3.0"]
    candidates = [v for v in V0_SCHEMAS if tuple(map(int, v.split("."))) <= version]
    return V0_SCHEMAS[candidates[-1] if candidates else "0.1.0"]
