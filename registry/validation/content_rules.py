"""Semantic rules on what a card declares: skills, security requirements and modes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from registry.validation.detection import Detection
from registry.validation.paths import pointer
from registry.validation.report import Issue, make_issue

# RFC 6838 §4.2 restricted-name, with `*` wildcards and optional parameters (RFC 9110 §8.3.1).
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(rf"(?:{_NAME}|\*)/(?:{_NAME}|\*)(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(?:[^;\s\"]+|\"[^\"]*\"))*")
# What the bare words seen in real cards (a2a-samples, a2a-dotnet) most likely mean.
_MEDIA_TYPE_HINTS = {
    "text": "text/plain",
    "json": "application/json",
    "data": "application/json",
    "file": "application/octet-stream",
    "image": "image/png",
    "audio": "audio/*",
    "video": "video/*",
}


@dataclass(frozen=True)
class _Context:
    declared_schemes: dict[str, Any]
    v1_based: bool  # v1.0 and hybrid cards also carry `securityRequirements`


def content_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    schemes = card.get("securitySchemes")
    context = _Context(schemes if isinstance(schemes, dict) else {}, (detection.flavor or "").startswith("1.0"))
    issues: list[Issue] = []
    _check_modes(card.get("defaultInputModes"), ("defaultInputModes",), issues)
    _check_modes(card.get("defaultOutputModes"), ("defaultOutputModes",), issues)
    _check_requirements(card, (), context, issues)
    skills = card.get("skills")
    if isinstance(skills, list):
        first_index: dict[str, int] = {}
        for index, skill in enumerate(skills):
            if isinstance(skill, dict):
                _check_skill(skill, index, first_index, context, issues)
    return issues


def _check_skill(
    skill: dict[str, Any], index: int, first_index: dict[str, int], context: _Context, issues: list[Issue]
) -> None:
    """§5.5.4: a skill id is "a unique identifier for the agent's skill"; tags are search keys;
    modes override the card's defaults; requirements follow the card's."""
    skill_id = skill.get("id")
    if isinstance(skill_id, str):
        if skill_id in first_index:
            issues.append(
                make_issue(
                    "skill-id-duplicate",
                    pointer("skills", index, "id"),
                    f'skill id "{skill_id}" is already used by /skills/{first_index[skill_id]}; ids must be unique',
                )
            )
        else:
            first_index[skill_id] = index
    tags = skill.get("tags")
    if isinstance(tags, list):
        for tag_index, tag in enumerate(tags):
            if isinstance(tag, str) and (not tag or tag.isspace()):
                issues.append(
                    make_issue(
                        "tag-blank",
                        pointer("skills", index, "tags", tag_index),
                        "this tag is blank; remove it or name what the skill does",
                    )
                )
    _check_modes(skill.get("inputModes"), ("skills", index, "inputModes"), issues)
    _check_modes(skill.get("outputModes"), ("skills", index, "outputModes"), issues)
    _check_requirements(skill, ("skills", index), context, issues)


def _check_requirements(
    holder: dict[str, Any], where: tuple[str | int, ...], context: _Context, issues: list[Issue]
) -> None:
    """Every scheme a requirement names must be declared in `securitySchemes` (OpenAPI 3.0
    Security Requirement Object: "Each name MUST correspond to a security scheme which is
    declared"); a client cannot satisfy a requirement it has no definition for.

    0.x `security`: [{"oauth": ["read"]}]. v1.0 `securityRequirements`:
    [{"schemes": {"oauth": {"list": ["read"]}}}]; an entry there in the 0.x shape is reported,
    and its names are still checked, so the card learns everything at once."""
    declared = context.declared_schemes
    legacy = holder.get("security")
    if isinstance(legacy, list):
        for index, requirement in enumerate(legacy):
            if isinstance(requirement, dict):
                _check_names(requirement, (*where, "security", index), declared, issues)
    requirements = holder.get("securityRequirements") if context.v1_based else None
    if isinstance(requirements, list):
        for index, requirement in enumerate(requirements):
            if not isinstance(requirement, dict):
                continue
            schemes = requirement.get("schemes")
            if isinstance(schemes, dict):
                _check_names(schemes, (*where, "securityRequirements", index, "schemes"), declared, issues)
            elif "schemes" not in requirement and requirement:
                issues.append(
                    make_issue(
                        "security-requirement-shape",
                        pointer(*where, "securityRequirements", index),
                        "this is the v0.3 `security` shape; a v1.0 requirement is "
                        '{"schemes": {"<scheme>": {"list": ["<scope>", …]}}}',
                    )
                )
                _check_names(requirement, (*where, "securityRequirements", index), declared, issues)


def _check_names(
    names: dict[str, Any], where: tuple[str | int, ...], declared: dict[str, Any], issues: list[Issue]
) -> None:
    for name in names:
        if name not in declared:
            issues.append(
                make_issue(
                    "security-scheme-undeclared",
                    pointer(*where, name),
                    f"security scheme "
                    f'"{name}" is not declared in `securitySchemes`; declare it or remove '
                    "the requirement",
                )
            )


def _check_modes(modes: Any, where: tuple[str | int, ...], issues: list[Issue]) -> None:
    """§5.5: modes are "supported input MIME types"; clients match them against media types."""
    if not isinstance(modes, list):
        return
    for index, mode in enumerate(modes):
        if isinstance(mode, str) and _MEDIA_TYPE.fullmatch(mode) is None:
            issues.append(_bad_mode(mode, pointer(*where, index)))


def _bad_mode(mode: str, path: str) -> Issue:
    hint = _MEDIA_TYPE_HINTS.get(mode.strip().lower())
    suggestion = f'; did you mean "{hint}"?' if hint else '; use type/subtype, e.g. "text/plain"'
    return make_issue("media-type-invalid", path, f'"{mode}" is not a media type{suggestion}')
