"""Fast checks: plain Python predicates compiled once from the (inlined) AgentCard schemas.

A check is True only where the schema accepts the value; False may be wrong and only means
"ask jsonschema", which then finds and words every error. So soundness is all that matters, and
a schema with any keyword outside the small set below gets no check at all. The AgentCard
schemas of 0.1.0–0.3.0 use only these keywords, and a property test compares the results with
a plain jsonschema validator on the official files.

Why not fastjsonschema or jsonschema-rs: neither is a dependency of this project, and ~150
lines of predicates give the registry's hot path what it needs (see schema_store).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "boolean": bool,
    "object": dict,
    "array": list,
    "null": type(None),
    "integer": int,
}
# Types whose Python test is exact: "integer" is not (bool is an int), so it always gets a check.
_EXACT_TYPES = frozenset({"string", "boolean", "object", "array", "null"})
_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "format"})


def compile_checks(schema: Any) -> dict[int, Check]:
    """Fast checks for every subschema that can have one, keyed by the subschema's id (the schema
    must outlive the result: ids of dead objects are reused)."""
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
    if schema is True or schema == {}:
        return _accept_anything
    if not isinstance(schema, dict) or not schema.keys() <= _FAST_KEYWORDS:
        return None
    shape = _common_shape(schema, compiled)  # the common shapes get one function each
    if shape is not None:
        return shape
    parts: list[Check] = []
    for keyword, value in schema.items():
        if keyword == "format":  # an annotation: jsonschema asserts it only with a format checker
            continue
        part = _KEYWORD_BUILDERS[keyword](value, schema, compiled)
        if part is None:
            return None
        parts.append(part)
    return parts[0] if len(parts) == 1 else _all_of(parts)


def _common_shape(schema: dict[str, Any], compiled: dict[int, Check | None]) -> Check | None:
    kind, keywords = schema.get("type"), schema.keys() - {"format"}
    if kind == "object" and keywords <= _OBJECT_KEYWORDS:
        return _object_check(schema, compiled)
    if kind == "array" and keywords == {"type", "items"} and isinstance(schema["items"], dict):
        return _items_check(schema["items"], schema, compiled, lists_only=True)
    if kind == "string" and keywords in ({"type", "enum"}, {"type", "const"}):
        return _enum_check(schema.get("enum", [schema.get("const")]), schema, compiled)  # requires a string
    return None


def _accept_anything(value: Any) -> bool:
    return True


def _all_of(parts: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for part in parts:  # explicit loops: a generator per call costs more than the tests
            if not part(value):
                return False
        return True

    return check


def _object_check(schema: dict[str, Any], compiled: dict[int, Check | None]) -> Check | None:
    """type: object with properties, required and additionalProperties, walking the instance's
    own members (usually fewer than the schema declares). A member whose schema is a bare type
    is tested inline: a call per member would cost more than the test."""
    members = {name: _member_test(sub, compiled) for name, sub in schema.get("properties", {}).items()}
    additional = schema.get("additionalProperties", True)
    extra = None if additional is False else _member_test(additional, compiled)
    if None in members.values() or (additional is not False and extra is None):
        return None
    required = tuple(schema.get("required", ()))

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        for name in required:
            if name not in value:
                return False
        for name, member in value.items():
            test = members.get(name, extra)
            if test is None:  # additionalProperties: false
                return False
            if type(test) is type:
                if not isinstance(member, test):
                    return False
            elif not test(member):
                return False
        return True

    return check


def _member_test(schema: Any, compiled: dict[int, Check | None]) -> type | Check | None:
    """A Python type where the schema is just {"type": <string|boolean|object|array|null>}, else its check."""
    if isinstance(schema, dict) and schema.keys() == {"type"} and schema["type"] in _EXACT_TYPES:
        _compile(schema, compiled)  # still compiled, so pruning finds it
        return _PYTHON_TYPES[schema["type"]]
    return _compile(schema, compiled)


def _type_check(name: Any, schema: Any, compiled: Any) -> Check | None:
    names = name if isinstance(name, list) else [name]
    if not all(isinstance(n, str) and n in _PYTHON_TYPES for n in names):
        return None
    python_types = tuple(_PYTHON_TYPES[n] for n in names)
    if "integer" in names and "boolean" not in names:
        # `bool` is an `int` in Python but never a JSON integer; jsonschema agrees.
        return lambda value: isinstance(value, python_types) and not isinstance(value, bool)
    return lambda value: isinstance(value, python_types)


def _properties_check(properties: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    members = {name: _compile(sub, compiled) for name, sub in properties.items()}
    if None in members.values():
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(members[name](member) for name, member in value.items() if name in members)  # type: ignore[misc]

    return check


def _required_check(names: Any, schema: Any, compiled: Any) -> Check:
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _additional_check(additional: Any, schema: Any, compiled: dict[int, Check | None]) -> Check | None:
    declared = frozenset(schema.get("properties", {}))
    extra_check = None if additional is False else _compile(additional, compiled)
    if additional is not False and extra_check is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        extras = [member for key, member in value.items() if key not in declared]
        return not extras if extra_check is None else all(map(extra_check, extras))

    return check


def _items_check(items: Any, schema: Any, compiled: dict[int, Check | None], lists_only: bool = False) -> Check | None:
    """`items`; with `lists_only` also `type: array` (anything but a list fails)."""
    item_test = _member_test(items, compiled) if isinstance(items, dict) else None
    if item_test is None:
        return None
    if type(item_test) is type:  # lists of strings are most of a card

        def check_typed(value: Any) -> bool:
            if not isinstance(value, list):
                return not lists_only
            for item in value:
                if not isinstance(item, item_test):
                    return False
            return True

        return check_typed

    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return not lists_only
        for item in value:
            if not item_test(item):
                return False
        return True

    return check


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

    def check(value: Any) -> bool:
        for variant_check in checks:
            if variant_check(value):
                return True
        return False

    return check


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
