"""Judge a v1.0 card by the REQUIRED fields and types of the v1.0 field table, recursively.

v1.0 has no official JSON Schema: the normative definition is `a2a.proto`, and the field table
(`schemas/a2a-v1.0-field-presence.json`, read off the official SDK's descriptors) says for each
field of each message whether it is REQUIRED and its kind. Cards travel as ProtoJSON, so:
- a REQUIRED field must be present and not its proto3 default: "" or [] or {} count as unset
  (an SDK serialising such a card omits the field; `a2a-python__14` shows the result);
- `null` means "unset" (ProtoJSON), so it is no value at all;
- members of a oneof are exclusive (ProtoJSON rejects two) and a SecurityScheme or OAuthFlows
  without any member declares nothing a client could use.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from registry.validation.paths import child
from registry.validation.report import Issue, make_issue
from registry.validation.schema_validation import FIELD_TABLE_FILE, json_type_name, read_schema_file

STRING = "string"
STRUCT = "struct"  # google.protobuf.Struct: any JSON object

# What the table's "message", "repeated" and "map" fields hold (it records only the kind);
# from the message definitions of a2a.proto v1.0.
ELEMENT_TYPES: dict[tuple[str, str], str] = {
    ("AgentCard", "supportedInterfaces"): "AgentInterface",
    ("AgentCard", "provider"): "AgentProvider",
    ("AgentCard", "capabilities"): "AgentCapabilities",
    ("AgentCard", "securitySchemes"): "SecurityScheme",
    ("AgentCard", "securityRequirements"): "SecurityRequirement",
    ("AgentCard", "defaultInputModes"): STRING,
    ("AgentCard", "defaultOutputModes"): STRING,
    ("AgentCard", "skills"): "AgentSkill",
    ("AgentCard", "signatures"): "AgentCardSignature",
    ("AgentCapabilities", "extensions"): "AgentExtension",
    ("AgentExtension", "params"): STRUCT,
    ("AgentSkill", "tags"): STRING,
    ("AgentSkill", "examples"): STRING,
    ("AgentSkill", "inputModes"): STRING,
    ("AgentSkill", "outputModes"): STRING,
    ("AgentSkill", "securityRequirements"): "SecurityRequirement",
    ("AgentCardSignature", "header"): STRUCT,
    ("SecurityRequirement", "schemes"): "StringList",
    ("StringList", "list"): STRING,
    ("SecurityScheme", "apiKeySecurityScheme"): "APIKeySecurityScheme",
    ("SecurityScheme", "httpAuthSecurityScheme"): "HTTPAuthSecurityScheme",
    ("SecurityScheme", "oauth2SecurityScheme"): "OAuth2SecurityScheme",
    ("SecurityScheme", "openIdConnectSecurityScheme"): "OpenIdConnectSecurityScheme",
    ("SecurityScheme", "mtlsSecurityScheme"): "MutualTlsSecurityScheme",
    ("OAuth2SecurityScheme", "flows"): "OAuthFlows",
    ("OAuthFlows", "authorizationCode"): "AuthorizationCodeOAuthFlow",
    ("OAuthFlows", "clientCredentials"): "ClientCredentialsOAuthFlow",
    ("OAuthFlows", "implicit"): "ImplicitOAuthFlow",
    ("OAuthFlows", "password"): "PasswordOAuthFlow",
    ("OAuthFlows", "deviceCode"): "DeviceCodeOAuthFlow",
    ("AuthorizationCodeOAuthFlow", "scopes"): STRING,
    ("ClientCredentialsOAuthFlow", "scopes"): STRING,
    ("DeviceCodeOAuthFlow", "scopes"): STRING,
    ("ImplicitOAuthFlow", "scopes"): STRING,
    ("PasswordOAuthFlow", "scopes"): STRING,
}
# A oneof with nothing set leaves these messages empty of meaning.
ONEOF_MUST_BE_SET = frozenset({("SecurityScheme", "scheme"), ("OAuthFlows", "flow")})

_JSON_KIND: dict[str, type] = {"string": str, "bool": bool, "message": dict, "map": dict, "repeated": list}
_KIND_NOUN = {
    "string": "a string",
    "bool": "a boolean",
    "message": "an object",
    "map": "an object",
    "repeated": "an array",
}


@dataclass(frozen=True)
class FieldSpec:
    name: str
    required: bool
    kind: str  # string | bool | message | repeated | map
    oneof: str | None
    element: str | None  # a message name, STRING or STRUCT for message/repeated/map fields
    json_type: type  # str, bool, dict or list: what ProtoJSON writes for the kind


@functools.cache
def field_table() -> dict[str, dict[str, FieldSpec]]:
    """message name → field name → spec, from the shipped v1.0 field table."""
    table = read_schema_file(FIELD_TABLE_FILE)
    return {
        message: {
            name: FieldSpec(
                name,
                bool(spec["required"]),
                spec["kind"],
                spec["oneof"],
                ELEMENT_TYPES.get((message, name)),
                _JSON_KIND[spec["kind"]],
            )
            for name, spec in fields.items()
        }
        for message, fields in table.items()
    }


def proto_name(json_name: str) -> str:
    """`supportedInterfaces` → `supported_interfaces` (the proto field name ProtoJSON also accepts)."""
    return re.sub(r"([A-Z])", lambda match: "_" + match.group(1).lower(), json_name)


@functools.cache
def _oneofs(message: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(group, member names) of each oneof of a message."""
    groups: dict[str, list[str]] = {}
    for spec in field_table()[message].values():
        if spec.oneof is not None:
            groups.setdefault(spec.oneof, []).append(spec.name)
    return tuple((group, tuple(members)) for group, members in groups.items())


def v1_structure_issues(card: dict[str, Any], *, report_unknown_nested: bool) -> list[Issue]:
    """Every REQUIRED field missing or empty, every wrong type, every oneof problem, in order."""
    issues: list[Issue] = []
    _check_message(card, "AgentCard", "", issues, report_unknown_nested)
    return issues


def _check_message(obj: dict[str, Any], message: str, path: str, issues: list[Issue], report_unknown: bool) -> None:
    fields = field_table()[message]
    for spec in fields.values():
        value = obj.get(spec.name)
        if value is None:
            if spec.required:
                issues.append(_missing(obj, spec, message, child(path, spec.name)))
        elif not isinstance(value, spec.json_type):  # no kind is numeric, so bool needs no care
            issues.append(_wrong_type(value, spec, message, child(path, spec.name)))
        elif spec.required and not value and spec.kind != "message":  # "", [] or {}; a message may be {}
            issues.append(_empty(spec, message, child(path, spec.name)))
        elif spec.element is not None and spec.element != STRUCT:
            _check_members(value, spec, message, child(path, spec.name), issues, report_unknown)
    _check_oneofs(obj, message, path, issues)
    if report_unknown and path:  # the card's own top level is judged by the version-field rules
        issues += [
            make_issue(
                "unknown-field",
                child(path, name),
                f"`{name}` is not a field of A2A v1.0 {message}; clients ignore or reject it",
            )
            for name in obj
            if name not in fields
        ]


def _missing(obj: dict[str, Any], spec: FieldSpec, message: str, path: str) -> Issue:
    hint = ""
    if proto_name(spec.name) in obj and proto_name(spec.name) != spec.name:
        hint = (
            f"; found `{proto_name(spec.name)}`, its proto field name: JSON cards use "
            f"`{spec.name}` (ProtoJSON parsers accept both, plain JSON clients do not)"
        )
    state = "null" if spec.name in obj else "missing"
    return make_issue(
        "required-field-missing", path, f"required field `{spec.name}` is {state} (A2A v1.0 {message}){hint}"
    )


def _check_members(
    value: Any, spec: FieldSpec, message: str, path: str, issues: list[Issue], report_unknown: bool
) -> None:
    """The message a field holds, or each element of a repeated or map field."""
    if spec.kind == "message":
        _check_message(value, spec.element, path, issues, report_unknown)  # type: ignore[arg-type]
        return
    items = enumerate(value) if spec.kind == "repeated" else value.items()
    if spec.element == STRING:
        issues += [
            make_issue(
                "wrong-type",
                child(path, key),
                f"entries of `{spec.name}` must be strings (A2A v1.0 {message}), not {json_type_name(item)}",
            )
            for key, item in items
            if not isinstance(item, str)
        ]
        return
    for key, item in items:
        if isinstance(item, dict):
            _check_message(item, spec.element, child(path, key), issues, report_unknown)  # type: ignore[arg-type]
        else:
            issues.append(
                make_issue(
                    "wrong-type",
                    child(path, key),
                    f"entries of `{spec.name}` must be objects (A2A v1.0 {spec.element}), not {json_type_name(item)}",
                )
            )


def _wrong_type(value: Any, spec: FieldSpec, message: str, path: str) -> Issue:
    return make_issue(
        "wrong-type",
        path,
        f"must be {_KIND_NOUN[spec.kind]} (A2A v1.0 {message}.{spec.name}), not {json_type_name(value)}",
    )


def _empty(spec: FieldSpec, message: str, path: str) -> Issue:
    return make_issue(
        "required-field-empty",
        path,
        f"required field `{spec.name}` is empty (A2A v1.0 "
        f"{message}); proto3 treats an empty value as unset, so give it a value",
    )


def _check_oneofs(obj: dict[str, Any], message: str, path: str, issues: list[Issue]) -> None:
    for group, members in _oneofs(message):
        chosen = [name for name in members if obj.get(name) is not None]
        if len(chosen) > 1:
            issues.append(
                make_issue(
                    "oneof-conflict",
                    path,
                    f"sets {', '.join(f'`{n}`' for n in chosen)}; A2A v1.0 {message} allows only one of them",
                )
            )
        elif not chosen and (message, group) in ONEOF_MUST_BE_SET:
            issues.append(make_issue("oneof-missing", path, _oneof_missing_message(obj, message, members)))


def _oneof_missing_message(obj: dict[str, Any], message: str, members: tuple[str, ...]) -> str:
    text = f"sets none of {', '.join(f'`{n}`' for n in members)}; an A2A v1.0 {message} needs one"
    if message == "SecurityScheme" and "type" in obj:
        text += (
            f" (`type: {obj['type']}` is the v0.3 shape; v1.0 wraps the scheme, e.g. "
            '{"openIdConnectSecurityScheme": {"openIdConnectUrl": …}})'
        )
    return text
