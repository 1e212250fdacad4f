"""Size and count limits a registry puts on the cards it stores.

The protocol sets no limits; these protect the registry (storage, index size, response time)
and are configurable by the operator through `CardLimits`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from registry.validation.paths import child, pointer
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
    return [
        make_issue(
            "limit-card-bytes",
            "",
            f"the card is {size} bytes; this registry accepts at most "
            f"{limits.max_card_bytes} bytes, so it was not validated further",
        )
    ]


def check_depth_and_strings(card: dict[str, Any], limits: CardLimits, size: int | None = None) -> list[Issue]:
    """Walk every container depth first (iteratively: extension params may nest arbitrarily). A card
    of at most max_string_length bytes cannot hold a string that long (a character is 1+ bytes)."""
    check_strings = size is None or size > limits.max_string_length
    issues: list[Issue] = []
    deep_reported = False
    stack: list[tuple[str, Any, int]] = [("", card, 0)]
    while stack:
        path, value, depth = stack.pop()
        if check_strings and isinstance(value, dict):
            issues += [
                _too_long(child(path, key), "key", key, limits) for key in value if len(key) > limits.max_string_length
            ]
        if depth == limits.max_depth and value and not deep_reported:
            deep_reported = True  # once, where a depth-first walk first goes too deep
            last = next(reversed(value)) if isinstance(value, dict) else len(value) - 1
            message = f"the card nests {depth + 1} levels deep here; at most {depth} are accepted"
            issues.append(make_issue("limit-depth", child(path, last), message))
        for key, member in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(member, (dict, list)):
                stack.append((child(path, key), member, depth + 1))
            elif check_strings and isinstance(member, str) and len(member) > limits.max_string_length:
                issues.append(_too_long(child(path, key), "string", member, limits))
    return issues


def _too_long(path: str, noun: str, text: str, limits: CardLimits) -> Issue:
    return make_issue(
        "limit-string-length",
        path,
        f"this {noun} has {len(text)} characters; at most {limits.max_string_length} are accepted",
    )


def check_counts(card: dict[str, Any], limits: CardLimits) -> list[Issue]:
    """Counts the registry indexes per card: skills, tags, examples, interfaces, modes, schemes, signatures."""
    issues = _counts(
        card,
        (),
        (
            ("supportedInterfaces", limits.max_interfaces, "limit-interfaces", "interfaces"),
            ("additionalInterfaces", limits.max_interfaces, "limit-interfaces", "interfaces"),
            ("skills", limits.max_skills, "limit-skills", "skills"),
            ("securitySchemes", limits.max_security_schemes, "limit-security-schemes", "security schemes"),
            ("signatures", limits.max_signatures, "limit-signatures", "signatures"),
            ("defaultInputModes", limits.max_modes, "limit-modes", "modes"),
            ("defaultOutputModes", limits.max_modes, "limit-modes", "modes"),
        ),
    )
    skills = card.get("skills")
    if isinstance(skills, list):
        per_skill = (
            ("tags", limits.max_tags_per_skill, "limit-tags", "tags"),
            ("examples", limits.max_examples_per_skill, "limit-examples", "examples"),
            ("inputModes", limits.max_modes, "limit-modes", "modes"),
            ("outputModes", limits.max_modes, "limit-modes", "modes"),
        )
        for index, skill in enumerate(skills[: limits.max_skills]):
            if isinstance(skill, dict):
                issues += _counts(skill, ("skills", index), per_skill)
    return issues


def _counts(
    holder: dict[str, Any], where: tuple[str | int, ...], bounds: tuple[tuple[str, int, str, str], ...]
) -> list[Issue]:
    issues: list[Issue] = []
    for name, maximum, rule, noun in bounds:
        value = holder.get(name)
        if isinstance(value, (list, dict)) and len(value) > maximum:
            issues.append(
                make_issue(
                    rule,
                    pointer(*where, name),
                    f"{len(value)} {noun} declared here; this registry accepts at most {maximum}",
                )
            )
    return issues
