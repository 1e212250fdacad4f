"""Semantic rules on what a card declares: skills, security requirements and modes."""

from __future__ import annotations

import functools
import re
from typing import Any

from registry.validation.detection import Detection
from registry.validation.paths import object_items, pointer
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


# Paths are built only for what is reported: most cards have nothing to report here.

def _skill_issues(skills: Any) -> list[Issue]:
    """§5.5.4: a skill id is "a unique identifier for the agent's skill"; tags are search keys."""
    issues: list[Issue] = []
    first_index: dict[str, int] = {}
    for index, skill in object_items(skills):
        skill_id = skill.get("id")
        if isinstance(skill_id, str):
            if skill_id in first_index:
                issues.append(make_issue("skill-id-duplicate", pointer("skills", index, "id"), f"skill id "
                                         f"\"{skill_id}\" is already used by /skills/{first_index[skill_id]}; "
                                         "ids must be unique"))
            else:
                first_index[skill_id] = index
        tags = skill.get("tags")
        if isinstance(tags, list):
            issues += [make_issue("tag-blank", pointer("skills", index, "tags", tag_index), "this tag is blank; "
                                  "remove it or name what the skill does") for tag_index, tag in enumerate(tags)
                       if isinstance(tag, str) and (not tag or tag.isspace())]
    return issues


def _security_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    """Every scheme a requirement names must be declared in `securitySchemes` (OpenAPI 3.0
    Security Requirement Object: "Each name MUST correspond to a security scheme which is
    declared"); a client cannot satisfy a requirement it has no definition for."""
    schemes = card.get("securitySchemes")
    declared = schemes if isinstance(schemes, dict) else {}
    v1_based = (detection.flavor or "").startswith("1.0")
    issues: list[Issue] = []
    for where, holder in [((), card)] + [(("skills", index), skill) for index, skill in object_items(card.get("skills"))]:
        issues += _legacy_requirement_issues(holder.get("security"), (*where, "security"), declared)
        if v1_based:
            issues += _v1_requirement_issues(holder.get("securityRequirements"), (*where, "securityRequirements"),
                                             declared)
    return issues


def _legacy_requirement_issues(requirements: Any, where: tuple[str | int, ...], declared: dict[str, Any]) -> list[Issue]:
    """0.x shape: [{"oauth": ["read"]}, {"api-key": [], "mtls": []}]."""
    return [_undeclared(name, pointer(*where, index, name))
            for index, requirement in object_items(requirements) for name in requirement if name not in declared]


def _v1_requirement_issues(requirements: Any, where: tuple[str | int, ...], declared: dict[str, Any]) -> list[Issue]:
    """v1.0 shape: [{"schemes": {"oauth": {"list": ["read"]}}}]. An entry in the 0.x shape is
    reported, and its names are still checked, so the card learns everything at once."""
    issues: list[Issue] = []
    for index, requirement in object_items(requirements):
        schemes = requirement.get("schemes")
        if isinstance(schemes, dict):
            issues += [_undeclared(name, pointer(*where, index, "schemes", name))
                       for name in schemes if name not in declared]
        elif "schemes" not in requirement and requirement:
            issues.append(make_issue("security-requirement-shape", pointer(*where, index), "this is the v0.3 "
                                     "`security` shape; a v1.0 requirement is {\"schemes\": {\"<scheme>\": "
                                     "{\"list\": [\"<scope>\", …]}}}"))
            issues += [_undeclared(name, pointer(*where, index, name)) for name in requirement if name not in declared]
    return issues


def _undeclared(name: str, path: str) -> Issue:
    return make_issue("security-scheme-undeclared", path, f"security scheme \"{name}\" is not declared in "
                      "`securitySchemes`; declare it or remove the requirement")


def _mode_issues(card: dict[str, Any]) -> list[Issue]:
    issues = _modes(card.get("defaultInputModes"), ("defaultInputModes",))
    issues += _modes(card.get("defaultOutputModes"), ("defaultOutputModes",))
    for index, skill in object_items(card.get("skills")):
        issues += _modes(skill.get("inputModes"), ("skills", index, "inputModes"))
        issues += _modes(skill.get("outputModes"), ("skills", index, "outputModes"))
    return issues


def _modes(modes: Any, where: tuple[str | int, ...]) -> list[Issue]:
    """§5.5: modes are "supported input MIME types"; clients match them against media types."""
    if not isinstance(modes, list):
        return []
    return [_bad_mode(mode, pointer(*where, index)) for index, mode in enumerate(modes)
            if isinstance(mode, str) and not is_media_type(mode)]


@functools.lru_cache(maxsize=1024)
def is_media_type(mode: str) -> bool:
    """Cached: a few dozen media types make up nearly every card's modes."""
    return _MEDIA_TYPE.fullmatch(mode) is not None


def _bad_mode(mode: str, path: str) -> Issue:
    hint = _MEDIA_TYPE_HINTS.get(mode.strip().lower())
    suggestion = f"; did you mean \"{hint}\"?" if hint else "; use type/subtype, e.g. \"text/plain\""
    return make_issue("media-type-invalid", path, f"\"{mode}\" is not a media type{suggestion}")
