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
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from signing.card_schema import CardSchema, Kind, MessageSpec, Shape, detect_schema
from signing.errors import CanonicalizationError, CardFormatError

MAX_DEPTH = 128  # same bound as a2a-sdk's canonicaliser: deeper nesting is refused, not a crash
_SAFE_INT = 2**53 - 1
_DROP: Any = object()  # "leave this member out" (a sentinel; None is a JSON value)
_SCALAR, _OPEN, _MESSAGE, _LIST, _MAP = Kind.SCALAR, Kind.OPEN, Kind.MESSAGE, Kind.LIST, Kind.MAP  # cheaper than Kind.X

# json's C encoder writes exactly RFC 8785 bytes for trees of strings, booleans, nulls and
# integers within 2**53 whose object keys are all in the BMP: string escaping is identical
# (RFC 8785 §3.2.2.2) and code point order equals UTF-16 code unit order for BMP keys
# (§3.2.3). Floats are the one scalar it formats differently (repr, not ECMAScript), so the
# walk swaps each float for a token string and the `rfc8785` package's text for that number
# is put back in place of the quoted token. A tree with a non-BMP key goes wholly to
# `rfc8785`. tests/signing check both paths against `rfc8785` on generated trees.
_fast_jcs = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode
_NONCE = secrets.token_hex(8)  # unguessable, so no card string can pose as a token
_FLOAT_TOKEN = re.compile('"\uffff' + _NONCE + r':(\d+)\uffff"')


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
    return CanonicalPayload(form, schema.version, reducer.encode(tree), reducer.pointers())


def jcs(value: Any) -> bytes:
    """RFC 8785 bytes of any JSON value (dicts, lists, str, int, float, bool, None).

    Raises CanonicalizationError if it has no canonical form.
    """
    reducer = _Reducer(None, CanonicalForm.PLAIN)
    return reducer.encode(reducer.open(value, 1))


def _rfc8785(value: Any) -> bytes:
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as error:
        raise CanonicalizationError(f"the card has no RFC 8785 form: {error}") from error


def _is_empty(value: Any) -> bool:
    return value is None or (type(value) in (str, list, dict) and not value)


class _Reducer:
    """One walk of one card in one form: builds the reduced tree and notes what it drops."""

    def __init__(self, schema: CardSchema | None, form: CanonicalForm) -> None:
        self.proto = schema is not None and schema.proto and form is not CanonicalForm.PLAIN
        self.clean = form is CanonicalForm.SDK
        self.strict = form is CanonicalForm.STRICT
        self.astral_keys = False  # the tree needs `rfc8785` throughout (see `_fast_jcs`)
        self.floats: list[float] = []
        self._dropped: list[tuple[Any, Any]] = []

    def encode(self, tree: Any) -> bytes:
        """RFC 8785 bytes of a tree this walk built. Raises CanonicalizationError."""
        try:
            data = _rfc8785(tree) if self.astral_keys else _fast_jcs(tree).encode("utf-8")
        except UnicodeEncodeError as error:
            raise CanonicalizationError(
                "the card contains text that is not valid Unicode (a lone surrogate)"
            ) from error
        if not self.floats:
            return data
        numbers = [_rfc8785(number) for number in self.floats]
        return _FLOAT_TOKEN.sub(lambda match: numbers[int(match[1])].decode("ascii"), data.decode("utf-8")).encode(
            "utf-8"
        )

    def pointers(self) -> tuple[str, ...]:
        """JSON pointers of the non-empty members the walk left out."""
        return tuple(_pointer(node) for node in self._dropped)

    def message(self, obj: Mapping[str, Any], spec: MessageSpec, node: Any, depth: int) -> Any:
        if spec.discriminator is not None:
            spec = spec.variant(obj)
        fields, clean, strict = spec.fields, self.clean, self.strict
        out = {}
        for key, value in obj.items():
            field = fields.get(key)
            if field is None:
                if not _is_empty(value):
                    self._dropped.append((node, key))
                continue
            # Every JSON default ("", false, 0, [], {}) is falsy and nothing else is (None aside).
            if value is None or (not value and (field.omit_default_strict if strict else field.omit_default_sdk)):
                continue
            shape = field.shape
            kind = shape.kind
            if kind is _SCALAR and type(value) is str:  # the common cases inline: strings, messages, lists
                if value or not clean:
                    out[field.name] = value
                continue
            if kind is _MESSAGE and type(value) is dict:
                reduced = self.message(value, shape.message, (node, key), depth + 1)  # type: ignore[arg-type]
            elif kind is _LIST and type(value) is list:
                reduced = self._list(value, shape.item, (node, key), depth + 1)  # type: ignore[arg-type]
            else:
                reduced = self.value(value, shape, (node, key), depth + 1)
            if reduced is not _DROP:
                out[field.name] = reduced
        return _DROP if clean and not out else out

    def value(self, value: Any, shape: Shape, node: Any, depth: int) -> Any:
        """`value` reduced by `shape`; a value of the wrong type for the schema is kept as it is."""
        kind = shape.kind
        if kind is _SCALAR or kind is _OPEN or depth > MAX_DEPTH:
            return self.open(value, depth)
        if kind is _MESSAGE:
            if isinstance(value, dict):
                return self.message(value, shape.message, node, depth)  # type: ignore[arg-type]
        elif isinstance(value, list):
            return self._list(value, shape.item, node, depth)  # type: ignore[arg-type]
        elif kind is _MAP and isinstance(value, dict):
            return self._map(value, shape.item, node, depth)  # type: ignore[arg-type]
        return self.open(value, depth)

    def _list(self, items: list[Any], item: Shape, node: Any, depth: int) -> Any:
        out = []
        clean, kind, message = self.clean, item.kind, item.message
        depth += 1
        for index, value in enumerate(items):
            if kind is _SCALAR and type(value) is str:  # tags, modes, examples: inline
                if value or not clean:
                    out.append(value)
                continue
            if value is None:
                continue
            if kind is _MESSAGE and type(value) is dict:  # skills, interfaces, extensions
                reduced = self.message(value, message, (node, index), depth)  # type: ignore[arg-type]
            else:
                reduced = self.value(value, item, (node, index), depth)
            if reduced is not _DROP:
                out.append(reduced)
        return _DROP if clean and not out else out

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
        if type(value) is dict or isinstance(value, Mapping):
            out = {}
            for key, member in value.items():
                self._check_key(key)
                reduced = self.open(member, depth + 1)
                if reduced is not _DROP:
                    out[key] = reduced
            return _DROP if self.clean and not out else out
        if type(value) is list or isinstance(value, list | tuple):
            items = [r for r in (self.open(v, depth + 1) for v in value) if r is not _DROP]
            return _DROP if self.clean and not items else items
        return self._other_scalar(value)

    def _number(self, value: int | float) -> Any:
        if type(value) is float:
            return self._float(value)
        if not -_SAFE_INT <= value <= _SAFE_INT:
            if not self.proto:
                raise CanonicalizationError(f"integer {value} is beyond 2**53 and has no interoperable JSON form")
            # ProtoJSON: every number in a Struct is a double (a2a-sdk signs 2**60 as 1152921504606847000).
            try:
                return self._float(float(value))
            except OverflowError as error:
                raise CanonicalizationError(f"integer {value} is too large for a JSON number") from error
        return value

    def _float(self, value: float) -> str:
        self.floats.append(value)
        return f"\uffff{_NONCE}:{len(self.floats) - 1}\uffff"

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
            self.astral_keys = True  # UTF-16 order differs from code point order for this key


def _pointer(node: Any) -> str:
    parts = []
    while node is not None:
        node, key = node
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(reversed(parts))
