"""Fields that do not belong to the version a card is judged as: typos, proto names, and fields
of other protocol versions (mixed cards such as a 0.x card using 1.0's `extendedAgentCard`).

All warnings: the official schemas allow extra properties and ProtoJSON parsers in the SDKs
ignore unknown fields, so such a card works, but the field does nothing for its clients.
"""

from __future__ import annotations

import functools
from typing import Any

from registry.validation.detection import Detection
from registry.validation.field_table import field_table, proto_name
from registry.validation.paths import child
from registry.validation.report import Issue, make_issue
from registry.validation.schema_validation import SCHEMA_VERSIONS, card_properties

# Names that are no field of any version, with what was meant.
_KNOWN_MISTAKES = {
    # The v1.0 spec's migration appendix A.2.2 calls the legacy field by this name.
    "supportsExtendedAgentCard": "v0.3 uses `supportsAuthenticatedExtendedCard`, v1.0 uses "
    "`capabilities.extendedAgentCard`",
}


@functools.cache
def _fields_by_version() -> dict[str, frozenset[str]]:
    fields = {f"v{version}": card_properties(version) for version in SCHEMA_VERSIONS}
    fields["v1.0"] = frozenset(field_table()["AgentCard"])
    return fields


def _known_fields(detection: Detection) -> frozenset[str]:
    by_version = _fields_by_version()
    if detection.flavor == "1.0":
        return by_version["v1.0"]
    if detection.flavor == "1.0+0.3":
        return by_version["v1.0"] | by_version[f"v{detection.schema_version}"]
    return by_version[f"v{detection.schema_version}"]


def version_field_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    known = _known_fields(detection)
    issues = [_stranger(name, known, detection) for name in card if name not in known]
    issues += _capability_issues(card.get("capabilities"), detection)
    return issues


def _stranger(name: str, known: frozenset[str], detection: Detection) -> Issue:
    path = child("", name)
    judged_as = f"v{detection.protocol_version or detection.schema_version}"
    elsewhere = [version for version, fields in _fields_by_version().items() if name in fields]
    if elsewhere:
        return make_issue(
            "foreign-version-field",
            path,
            f"`{name}` is a field of A2A {', '.join(elsewhere)}, "
            f"but this card is judged as {judged_as}; its clients ignore it",
        )
    if name in _KNOWN_MISTAKES:
        return make_issue("unknown-field", path, f"`{name}` is not an A2A field: {_KNOWN_MISTAKES[name]}")
    camel = [field for field in sorted(known) if proto_name(field) == name]
    hint = f"; did you mean `{camel[0]}`? (JSON cards use lowerCamelCase names)" if camel else ""
    return make_issue("unknown-field", path, f"`{name}` is not a field of an A2A {judged_as} card{hint}")


def _capability_issues(capabilities: Any, detection: Detection) -> list[Issue]:
    if not isinstance(capabilities, dict):
        return []
    if "extendedAgentCard" in capabilities and not (detection.flavor or "").startswith("1.0"):
        return [
            make_issue(
                "foreign-version-field",
                "/capabilities/extendedAgentCard",
                "`capabilities."
                "extendedAgentCard` is a v1.0 field; a 0.x card declares "
                "`supportsAuthenticatedExtendedCard` at its top level",
            )
        ]
    return []
