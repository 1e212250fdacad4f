"""Size and count limits a registry puts on the cards it stores.

The protocol sets no limits; these protect the registry (storage, index size, response time)
and are configurable by the operator through `CardLimits`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from registry.validation.paths import child
from registry.validation.report import Issue, make_issue


@dataclass(frozen=True)
class CardLimits:
    """Upper bounds on one card. Every bound must be a positive integer."""

    max_card_bytes: int = 256 * 1024
    max_skills: int = 200
    max_tags_per_skill: int = 50
    max_examples_per_skill: int = 50
    max_interfaces: int = 20
    max_modes: int = 50
    max_security_schemes: int = 50
    max_signatures: int = 10
    max_string_length: int = 16_384
    max_depth: int = 32

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"CardLimits.{spec.name} must be a positive integer, got {value!r}")


DEFAULT_LIMITS = CardLimits()


def check_card_bytes(size: int, limits: CardLimits) -> list[Issue]:
    if size <= limits.max_card_bytes:
        return []
    return [make_issue("limit-card-bytes", "", f"the card is {size} bytes; this registry accepts at most "
                       f"{limits.max_card_bytes} bytes, so it was not validated further")]


def check_depth_and_strings(card: Any, limits: CardLimits) -> list[Issue]:
    """Walk every value (iteratively: cards may nest arbitrarily inside extension params)."""
    if _within_depth_and_lengths(card, limits):
        return []
    issues: list[Issue] = []
    too_deep_reported = False
    for path, value, depth in _walk(card):
        if depth > limits.max_depth and not too_deep_reported:
            too_deep_reported = True
            issues.append(make_issue("limit-depth", path, f"the card nests {depth} levels deep here; "
                                     f"at most {limits.max_depth} are accepted"))
        if isinstance(value, str) and len(value) > limits.max_string_length:
            issues.append(_too_long(path, "string", len(value), limits))
        elif isinstance(value, dict):
            issues += [_too_long(child(path, key), "key", len(key), limits)
                       for key in value if len(key) > limits.max_string_length]
    return issues


def _too_long(path: str, noun: str, length: int, limits: CardLimits) -> Issue:
    return make_issue("limit-string-length", path, f"this {noun} has {length} characters; "
                      f"at most {limits.max_string_length} are accepted")


def _within_depth_and_lengths(root: Any, limits: CardLimits) -> bool:
    """The common case, answered without building a pointer for every value (validation is on
    the registration hot path); pointers are built only when something is over a limit."""
    max_length, max_depth = limits.max_string_length, limits.max_depth
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > max_depth:
            return False
        if isinstance(value, str):
            if len(value) > max_length:
                return False
        elif isinstance(value, dict):
            for key, member in value.items():
                if len(key) > max_length:
                    return False
                stack.append((member, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return True


def _walk(root: Any) -> Iterator[tuple[str, Any, int]]:
    stack: list[tuple[str, Any, int]] = [("", root, 0)]
    while stack:
        path, value, depth = stack.pop()
        yield path, value, depth
        if isinstance(value, dict):
            stack.extend((child(path, key), member, depth + 1) for key, member in value.items())
        elif isinstance(value, list):
            stack.extend((child(path, index), item, depth + 1) for index, item in enumerate(value))


def check_counts(card: dict[str, Any], limits: CardLimits) -> list[Issue]:
    """Counts the registry indexes per card: skills, tags, examples, interfaces, modes, schemes, signatures."""
    issues: list[Issue] = []
    for field_name in ("supportedInterfaces", "additionalInterfaces"):
        issues += _count("limit-interfaces", card.get(field_name), limits.max_interfaces, child("", field_name),
                         "interfaces")
    issues += _count("limit-skills", card.get("skills"), limits.max_skills, "/skills", "skills")
    issues += _count("limit-security-schemes", card.get("securitySchemes"), limits.max_security_schemes,
                     "/securitySchemes", "security schemes")
    issues += _count("limit-signatures", card.get("signatures"), limits.max_signatures, "/signatures", "signatures")
    for field_name in ("defaultInputModes", "defaultOutputModes"):
        issues += _count("limit-modes", card.get(field_name), limits.max_modes, child("", field_name), "modes")
    skills = card.get("skills")
    if isinstance(skills, list):
        for index, skill in enumerate(skills[: limits.max_skills]):
            if isinstance(skill, dict):
                issues += _skill_counts(skill, child("/skills", index), limits)
    return issues


def _skill_counts(skill: dict[str, Any], path: str, limits: CardLimits) -> list[Issue]:
    issues = _count("limit-tags", skill.get("tags"), limits.max_tags_per_skill, child(path, "tags"), "tags")
    issues += _count("limit-examples", skill.get("examples"), limits.max_examples_per_skill,
                     child(path, "examples"), "examples")
    for field_name in ("inputModes", "outputModes"):
        issues += _count("limit-modes", skill.get(field_name), limits.max_modes, child(path, field_name), "modes")
    return issues


def _count(rule: str, value: Any, maximum: int, path: str, noun: str) -> list[Issue]:
    if not isinstance(value, (list, dict)) or len(value) <= maximum:
        return []
    return [make_issue(rule, path, f"{len(value)} {noun} declared here; this registry accepts at most {maximum}")]
