"""`validate_card`: the one entry point the API, the CLI and the crawler call."""

from __future__ import annotations

import json
from typing import Any

from registry.validation.content_rules import content_issues
from registry.validation.detection import Detection, detect
from registry.validation.field_table import v1_structure_issues
from registry.validation.limits import (
    DEFAULT_LIMITS,
    CardLimits,
    check_card_bytes,
    check_counts,
    check_depth_and_strings,
)
from registry.validation.report import Issue, ValidationReport, make_issue, unique_in_order
from registry.validation.schema_validation import compat_schema_issues, json_type_name, schema_issues
from registry.validation.transport_rules import transport_issues
from registry.validation.version_fields import version_field_issues


def validate_card(card: object, *, limits: CardLimits | None = None, raw_size: int | None = None) -> ValidationReport:
    """Judge a parsed Agent Card of any protocol version and return every issue found.

    `card` may be any parsed JSON value: a non-object is reported as an issue, never raised.
    `raw_size` is the size in bytes of the document as received; without it the size of the
    compact serialisation is used. A card over `limits.max_card_bytes` is not examined further.
    """
    limits = limits or DEFAULT_LIMITS
    if not isinstance(card, dict):
        return ValidationReport(
            None,
            None,
            [make_issue("card-not-object", "", f"an Agent Card is a JSON object, not {json_type_name(card)}")],
        )
    detection, issues = detect(card)
    size = raw_size if raw_size is not None else _compact_size(card)
    too_large = check_card_bytes(size, limits) if size is not None else []
    if too_large:
        return ValidationReport(detection.protocol_version, detection.flavor, too_large)
    issues += check_depth_and_strings(card, limits, size)
    issues += check_counts(card, limits)
    issues += _structure_issues(card, detection)
    if detection.flavor is not None:
        issues += version_field_issues(card, detection)
        issues += transport_issues(card, detection)
        issues += content_issues(card, detection)
    return ValidationReport(detection.protocol_version, detection.flavor, unique_in_order(issues))


def _structure_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    """v1.0 (and the v1.0 part of a hybrid) by the field table; 0.x by its official schema."""
    if detection.flavor in ("1.0", "1.0+0.3"):
        issues = v1_structure_issues(card, report_unknown_nested=detection.flavor == "1.0")
        if detection.flavor == "1.0+0.3" and detection.schema_version is not None:
            # Hybrid policy: valid when the 1.0 part is; the 0.3 view only warns.
            issues += compat_schema_issues(card, detection.schema_version)
        return issues
    if detection.schema_version is not None:
        return schema_issues(card, detection.schema_version)
    return []


def _compact_size(card: dict[str, Any]) -> int | None:
    try:
        return len(json.dumps(card, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return None  # not serialisable as JSON: the structural checks report what is wrong with it
