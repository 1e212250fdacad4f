"""Which A2A protocol version a card targets, and which official schema judges it.

Signals, strongest first:
- `supportedInterfaces` → v1.0; with any 0.3 field beside it (`url`, `protocolVersion`, …) it is
  a hybrid "1.0+0.3" card, as the official a2a-sdk 1.x serves cards to 0.3 clients.
- `protocolVersion` → that version: major ≥ 1 is judged as v1.0, 0.x by the closest schema.
- `authentication` without `protocolVersion` → v0.1 (the only version with that field).
- `url` alone → a 0.2 card from before v0.2.5 made `protocolVersion` required: v0.2.0 schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from registry.validation.report import Issue, make_issue

V1_INTERFACES_FIELDS = ("supportedInterfaces", "supported_interfaces")  # the second is the proto name
COMPAT_03_FIELDS = (
    "url",
    "protocolVersion",
    "preferredTransport",
    "additionalInterfaces",
    "security",
    "supportsAuthenticatedExtendedCard",
)
LATEST_0X_SCHEMA = "0.3.0"

_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class Detection:
    flavor: str | None  # "1.0", "1.0+0.3", "0.3", "0.2", "0.1"
    protocol_version: str | None
    schema_version: str | None  # official 0.x schema for the card (0.x) or its compat part (hybrid)


def parse_version(text: Any) -> tuple[int, int, int] | None:
    """'0.3' → (0, 3, 0); anything that is not Major.Minor[.Patch] → None."""
    if not isinstance(text, str):
        return None
    match = _VERSION_PATTERN.match(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def schema_for(version: tuple[int, int, int]) -> str:
    """The closest official 0.x schema. 0.2.7–0.2.9 were never released: documents of the 0.3
    line (the v0.3.0 spec's own sample, a2a-java fixtures) say "0.2.9", so they take v0.3.0."""
    _, minor, patch = version
    if minor <= 1:
        return "0.1.0"
    if minor == 2:
        return "0.2.0" if patch < 5 else "0.2.5" if patch == 5 else "0.2.6" if patch == 6 else "0.3.0"
    return LATEST_0X_SCHEMA


def _flavor_of_schema(schema_version: str) -> str:
    return {"0.1.0": "0.1", "0.3.0": "0.3"}.get(schema_version, "0.2")


def detect(card: dict[str, Any]) -> tuple[Detection, list[Issue]]:
    """Tell the version; warn when the declared version is not one this validator knows."""
    if any(name in card for name in V1_INTERFACES_FIELDS):
        return _detect_v1(card)
    if "protocolVersion" in card:
        return _detect_declared(card["protocolVersion"])
    if "authentication" in card:
        return Detection("0.1", "0.1", "0.1.0"), []
    if "url" in card:
        return Detection("0.2", "0.2.0", "0.2.0"), [
            make_issue(
                "protocol-version-missing",
                "/protocolVersion",
                "no `protocolVersion`: judged as a v0.2.0 card; since v0.2.5 the field is required, "
                'so declare the version the agent speaks (e.g. "0.3.0")',
            )
        ]
    return Detection(None, None, None), [
        make_issue(
            "version-undetectable",
            "",
            "cannot tell which A2A version this card targets: a v1.0 card has `supportedInterfaces`, "
            "a v0.2/v0.3 card has `url` and `protocolVersion`, a v0.1 card has `url` and `authentication`",
        )
    ]


def _detect_v1(card: dict[str, Any]) -> tuple[Detection, list[Issue]]:
    declared = parse_version(card.get("protocolVersion"))
    compat_fields = [name for name in COMPAT_03_FIELDS if name in card]
    if declared is not None and declared[0] >= 1:
        compat_fields.remove("protocolVersion")  # a v1 card restating its version has no 0.3 view
    if not compat_fields:
        return Detection("1.0", "1.0", None), []
    compat_schema = schema_for(declared) if declared is not None and declared[0] == 0 else LATEST_0X_SCHEMA
    return Detection("1.0+0.3", "1.0", compat_schema), []


def _detect_declared(declared: Any) -> tuple[Detection, list[Issue]]:
    version = parse_version(declared)
    label = declared if isinstance(declared, str) else None
    if version is None:
        # Judged by the newest 0.x schema, which also reports a non-string value as wrong-type.
        issues = (
            []
            if label is None
            else [
                make_issue(
                    "protocol-version-unknown",
                    "/protocolVersion",
                    f"`protocolVersion` {declared!r} is not Major.Minor[.Patch]; judged as a v0.3.0 card",
                )
            ]
        )
        return Detection("0.3", label, LATEST_0X_SCHEMA), issues
    if version[0] >= 1:
        return Detection("1.0", label, None), []
    schema_version = schema_for(version)
    issues = []
    if version[1] > 3:
        issues.append(
            make_issue(
                "protocol-version-unknown",
                "/protocolVersion",
                f"A2A {declared} is not a released version; judged as a v0.3.0 card",
            )
        )
    return Detection(_flavor_of_schema(schema_version), label, schema_version), issues
