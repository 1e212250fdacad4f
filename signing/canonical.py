"""The canonical payload of an Agent Card signature (A2A §8.4): what the JWS actually covers.

Three named forms, all without `signatures` and all RFC 8785 (JCS) bytes:

- `SDK` (default): what the official SDKs sign and verify (Python `a2a-sdk` >= 1.1.4, JS
  `@a2a-js/sdk`). The card is reduced to the fields of its protocol version's schema
  (unknown fields dropped; v1.0 cards follow ProtoJSON, so non-`optional` scalars at their
  default are dropped and Struct numbers are doubles), then every empty string, list, object
  and null is removed recursively (`false` and `0` stay), then JCS.
- `STRICT`: the spec text's rule. Reduced to the schema's fields; for v1.0 a field at its
  default value is omitted unless it is REQUIRED or proto3 `optional`; nothing else removed.
- `PLAIN`: the JCS of the card as it is, minus `signatures`.

Every form also reports the card fields it leaves out (JSON pointers), i.e. what a
signature over that form does not cover.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from signing.card_schema import CardSchema, FieldSpec, Kind, MessageSpec, Shape, detect_schema
from signing.errors import CanonicalizationError, CardFormatError

MAX_DEPTH = 128  # same bound as a2a-sdk's canonicaliser: deeper nesting is refused, not a crash
_SAFE_INT = 2**53 - 1
_DROP: Any = object()  # "leave this member out" (a sentinel; None is a JSON value)

# json's C encoder writes exactly RFC 8785 bytes when the tree has no floats, no integers
# beyond 2**53 and no object key outside the BMP: string escaping is identical (RFC 8785
# §3.2.2.2) and code point order equals UTF-16 code unit order for BMP keys (§3.2.3).
# Trees with any of those go to the `rfc8785` package; tests/signing check the two agree.
_fast_jcs = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


class CanonicalForm(enum.Enum):
    """The named canonical payloads, in the order verification tries them."""

    SDK = "sdk"
    STRICT = "strict"
    PLAIN = "plain"


@dataclass(frozen=True)
class CanonicalPayload:
    """The bytes a signature covers, the schema version used and the fields left out."""

    form: CanonicalForm
    schema_version: str
    data: bytes
    uncovered: tuple[str, ...]


def canonicalize(card: Mapping[str, Any], form: CanonicalForm | str = CanonicalForm.SDK) -> bytes:
    """The RFC 8785 bytes a signature in `form` covers for `card`.

    Raises CardFormatError if `card` is not a JSON object; CanonicalizationError if it has no
    JCS form (non-finite or out-of-range numbers, lone surrogates, non-JSON values, too deep).
    """
    return canonical_payload(card, form).data


def canonical_payload(card: Mapping[str, Any], form: CanonicalForm | str = CanonicalForm.SDK) -> CanonicalPayload:
    """Like `canonicalize`, with the schema version used and the uncovered fields (JSON pointers)."""
    if not isinstance(card, Mapping):
        raise CardFormatError(f"an Agent Card must be a JSON object, not {type(card).__name__}")
    form = CanonicalForm(form)
    schema = detect_schema(card)
    reducer = _Reducer(schema, form)
    body = {key: value for key, value in card.items() if key != "signatures"}
    tree = reducer.open(body, 1) if form is CanonicalForm.PLAIN else reducer.message(body, schema.root, None, 1)
    if tree is _DROP:
        tree = {}
    return CanonicalPayload(form, schema.version, jcs(tree, reducer.exotic), reducer.pointers())


def jcs(tree: Any, exotic: bool = True) -> bytes:
    """RFC 8785 bytes of a JSON tree. With `exotic=False` the caller vouches the tree has no floats,
    no integers beyond 2**53 and no non-BMP object keys, and json's C encoder is used.

    Raises CanonicalizationError if the tree has no canonical form.
    """
    try:
        return rfc8785.dumps(tree) if exotic else _fast_jcs(tree).encode("utf-8")
    except UnicodeEncodeError as error:
        raise CanonicalizationError("the card contains text that is not valid Unicode (a lone surrogate)") from error
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as error:
        raise CanonicalizationError(f"the card has no RFC 8785 form: {error}") from error


def _is_empty(value: Any) -> bool:
    return value is None or (type(value) in (str, list, dict) and not value)


def _is_default(value: Any) -> bool:
    kind = type(value)
    if kind is bool or kind is str or kind is list or kind is dict:
        return not value
    return (kind is int or kind is float) and value == 0


class _Reducer:
    """One walk of one card in one form: builds the reduced tree and notes what it drops."""

    def __init__(self, schema: CardSchema, form: CanonicalForm) -> None:
        self.proto = schema.proto and form is not CanonicalForm.PLAIN
        self.clean = form is CanonicalForm.SDK
        self.strict = form is CanonicalForm.STRICT
        self.exotic = False  # the tree needs the general JCS encoder (see `_fast_jcs`)
        self._dropped: list[tuple[Any, Any]] = []

    def pointers(self) -> tuple[str, ...]:
        """JSON pointers of the non-empty members the walk left out."""
        return tuple(_pointer(node) for node in self._dropped)

    def message(self, obj: Mapping[str, Any], spec: MessageSpec, node: Any, depth: int) -> Any:
        spec = spec.variant(obj)
        fields = spec.fields
        out = {}
        for key, value in obj.items():
            field = fields.get(key)
            if field is None:
                if not _is_empty(value):
                    self._dropped.append((node, key))
                continue
            if value is None or (self.proto and _is_default(value) and self._omits_default(field)):
                continue
            reduced = self.value(value, field.shape, (node, key), depth + 1)
            if reduced is not _DROP:
                out[field.name] = reduced
        return _DROP if self.clean and not out else out

    def _omits_default(self, field: FieldSpec) -> bool:
        # ProtoJSON (a2a-sdk's MessageToDict) omits defaults of fields without presence; the
        # spec text (§8.4.1) keeps them for REQUIRED and `optional` fields. A message (OPEN
        # is a protobuf Struct here) that is present is never "at its default".
        if field.shape.kind is Kind.MESSAGE or field.shape.kind is Kind.OPEN:
            return False
        return not (field.presence or (self.strict and field.required))

    def value(self, value: Any, shape: Shape, node: Any, depth: int) -> Any:
        kind = shape.kind
        if kind is Kind.SCALAR or kind is Kind.OPEN or depth > MAX_DEPTH:
            return self.open(value, depth)
        if kind is Kind.MESSAGE:
            if isinstance(value, dict):
                return self.message(value, shape.message, node, depth)  # type: ignore[arg-type]
        elif isinstance(value, list):
            return self._list(value, shape.item, node, depth)  # type: ignore[arg-type]
        elif kind is Kind.MAP and isinstance(value, dict):
            return self._map(value, shape.item, node, depth)  # type: ignore[arg-type]
        return self.open(value, depth)  # wrong type for the schema: kept as it is

    def _list(self, items: list[Any], item: Shape, node: Any, depth: int) -> Any:
        out = []
        for index, value in enumerate(items):
            if value is None:
                continue
            reduced = self.value(value, item, (node, index), depth + 1)
            if reduced is not _DROP:
                out.append(reduced)
        return _DROP if self.clean and not out else out

    def _map(self, entries: dict[Any, Any], item: Shape, node: Any, depth: int) -> Any:
        out = {}
        for key, value in entries.items():
            self._check_key(key)
            if value is None:
                continue
            reduced = self.value(value, item, (node, key), depth + 1)
            if reduced is not _DROP:
                out[key] = reduced
        return _DROP if self.clean and not out else out

    def open(self, value: Any, depth: int) -> Any:
        """Free-form JSON: copied (cleaned in the SDK form) and checked for JCS-ability."""
        kind = type(value)
        if kind is str:
            return _DROP if self.clean and not value else value
        if kind is bool or value is None:
            return _DROP if self.clean and value is None else value
        if kind is int or kind is float:
            return self._number(value)
        if depth > MAX_DEPTH:
            raise CanonicalizationError(f"the card nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            out = {}
            for key, member in value.items():
                self._check_key(key)
                reduced = self.open(member, depth + 1)
                if reduced is not _DROP:
                    out[key] = reduced
            return _DROP if self.clean and not out else out
        if isinstance(value, list | tuple):
            items = [r for r in (self.open(v, depth + 1) for v in value) if r is not _DROP]
            return _DROP if self.clean and not items else items
        return self._other_scalar(value)

    def _number(self, value: int | float) -> Any:
        if type(value) is float:
            self.exotic = True
        elif not -_SAFE_INT <= value <= _SAFE_INT:
            if not self.proto:
                raise CanonicalizationError(f"integer {value} is beyond 2**53 and has no interoperable JSON form")
            # ProtoJSON: every number in a Struct is a double (a2a-sdk signs 2**60 as 1152921504606847000).
            self.exotic = True
            try:
                return float(value)
            except OverflowError as error:
                raise CanonicalizationError(f"integer {value} is too large for a JSON number") from error
        return value

    def _other_scalar(self, value: Any) -> Any:
        if isinstance(value, str):
            return str(value)
        if isinstance(value, int | float):
            return self._number(int(value) if isinstance(value, int) else float(value))
        raise CanonicalizationError(f"{type(value).__name__} is not a JSON value")

    def _check_key(self, key: Any) -> None:
        if type(key) is not str:
            if not isinstance(key, str):
                raise CanonicalizationError(f"object keys must be strings, not {type(key).__name__}")
        elif not key.isascii() and any(ord(ch) > 0xFFFF for ch in key):
            self.exotic = True  # UTF-16 order differs from code point order for this key


def _pointer(node: Any) -> str:
    parts = []
    while node is not None:
        node, key = node
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(reversed(parts))
