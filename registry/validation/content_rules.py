"""Semantic rules on what a card declares: skills, security requirements and modes."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from registry.validation.detection import Detection
from registry.validation.paths import child, object_entries
from registry.validation.report import Issue, make_issue

# RFC 6838 §4.2 restricted-name, with `*` wildcards and optional parameters (RFC 9110 §8.3.1).
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(
    rf"(?:{_NAME}|\*)/(?:{_NAME}|\*)(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(?:[^;\s\"]+|\"[^\"]*\"))*"
)
# What the bare words seen in real cards (a2a-samples, a2a-dotnet) most likely mean.
_MEDIA_TYPE_HINTS = {
    "text": "text/plain", "json": "application/json", "data": "application/json",
    "file": "application/octet-stream", "image": "image/png", "audio": "audio/*", "video": "video/*",
}


def content_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    issues = _skill_issues(card.get("skills"))
    issues += _security_issues(card, detection)
    issues += _mode_issues(card)
    return issues


def _skill_issues(skills: Any) -> list[Issue]:
    """§5.5.4: a skill id is "a unique identifier for the agent's skill"; tags are search keys."""
    issues: list[Issue] = []
    first_index: dict[str, int] = {}
    for index, skill, path in object_entries(skills, "/skills"):
        skill_id = skill.get("id")
        if isinstance(skill_id, str):
            if skill_id in first_index:
                issues.append(make_issue("skill-id-duplicate", child(path, "id"), f"skill id \"{skill_id}\" "
                                         f"is already used by /skills/{first_index[skill_id]}; ids must be unique"))
            else:
                first_index[skill_id] = index
        tags = skill.get("tags")
        if isinstance(tags, list):
            issues += [make_issue("tag-blank", child(path, "tags", tag_index), "this tag is blank; "
                                  "remove it or name what the skill does") for tag_index, tag in enumerate(tags)
                       if isinstance(tag, str) and not tag.strip()]
    return issues


def _security_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    """Every scheme a requirement names must be declared in `securitySchemes` (OpenAPI 3.0
    Security Requirement Object: "Each name MUST correspond to a security scheme which is
    declared"); a client cannot satisfy a requirement it has no definition for."""
    declared = card.get("securitySchemes")
    names = set(declared) if isinstance(declared, dict) else set()
    issues: list[Issue] = []
    v1_based = (detection.flavor or "").startswith("1.0")
    for holder, path in _requirement_holders(card):
        issues += _undeclared(_legacy_requirement_names(holder.get("security"), child(path, "security")), names)
        if v1_based:
            requirements = holder.get("securityRequirements")
            issues += _v1_shape_issues(requirements, child(path, "securityRequirements"))
            issues += _undeclared(_v1_requirement_names(requirements, child(path, "securityRequirements")), names)
    return issues


def _requirement_holders(card: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    yield card, ""
    for _, skill, path in object_entries(card.get("skills"), "/skills"):
        yield skill, path


def _legacy_requirement_names(requirements: Any, path: str) -> Iterator[tuple[str, str]]:
    """0.x shape: [{"oauth": ["read"]}, {"api-key": [], "mtls": []}]."""
    for _, requirement, entry_path in object_entries(requirements, path):
        for name in requirement:
            yield name, child(entry_path, name)


def _v1_requirement_names(requirements: Any, path: str) -> Iterator[tuple[str, str]]:
    """v1.0 shape: [{"schemes": {"oauth": {"list": ["read"]}}}]; the 0.x shape is named too, so a
    card in the wrong shape still learns which names are undeclared."""
    for _, requirement, entry_path in object_entries(requirements, path):
        schemes = requirement.get("schemes")
        if isinstance(schemes, dict):
            yield from ((name, child(entry_path, "schemes", name)) for name in schemes)
        elif "schemes" not in requirement:
            yield from ((name, child(entry_path, name)) for name in requirement)


def _v1_shape_issues(requirements: Any, path: str) -> list[Issue]:
    return [
        make_issue("security-requirement-shape", entry_path, "this is the v0.3 `security` shape; a v1.0 "
                   "requirement is {\"schemes\": {\"<scheme>\": {\"list\": [\"<scope>\", …]}}}")
        for _, requirement, entry_path in object_entries(requirements, path)
        if "schemes" not in requirement and requirement
    ]


def _undeclared(references: Iterator[tuple[str, str]], declared: set[str]) -> list[Issue]:
    return [
        make_issue("security-scheme-undeclared", path, f"security scheme \"{name}\" is not declared in "
                   "`securitySchemes`; declare it or remove the requirement")
        for name, path in references if name not in declared
    ]


def _mode_issues(card: dict[str, Any]) -> list[Issue]:
    issues = _modes(card.get("defaultInputModes"), "/defaultInputModes")
    issues += _modes(card.get("defaultOutputModes"), "/defaultOutputModes")
    for _, skill, path in object_entries(card.get("skills"), "/skills"):
        issues += _modes(skill.get("inputModes"), child(path, "inputModes"))
        issues += _modes(skill.get("outputModes"), child(path, "outputModes"))
    return issues


def _modes(modes: Any, path: str) -> list[Issue]:
    """§5.5: modes are "supported input MIME types"; clients match them against media types."""
    if not isinstance(modes, list):
        return []
    return [_bad_mode(mode, child(path, index)) for index, mode in enumerate(modes)
            if isinstance(mode, str) and not is_media_type(mode)]


@functools.lru_cache(maxsize=1024)
def is_media_type(mode: str) -> bool:
    """Cached: a few dozen media types make up nearly every card's modes."""
    return _MEDIA_TYPE.fullmatch(mode) is not None


def _bad_mode(mode: str, path: str) -> Issue:
    hint = _MEDIA_TYPE_HINTS.get(mode.strip().lower())
    suggestion = f"; did you mean \"{hint}\"?" if hint else "; use type/subtype, e.g. \"text/plain\""
    return make_issue("media-type-invalid", path, f"\"{mode}\" is not a media type{suggestion}")
