"""Size and count limits a registry puts on the cards it stores.

The protocol sets no limits; these protect the registry (storage, index size, response time)
and are configurable by the operator through `CardLimits`.
"""

from __future__ import annotations

from collections.abc import Iterator
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


def check_depth_and_strings(card: Any, limits: CardLimits, size: int | None = None) -> list[Issue]:
    """Walk every value (iteratively: cards may nest arbitrarily inside extension params).

    `size` is the card's size in bytes when known: every character of a JSON text takes at least
    one byte, so no string of a card of at most max_string_length bytes can be too long, and then
    only the depth is walked."""
    strings_fit = size is not None and size <= limits.max_string_length
    if _within_depth(card, limits.max_depth) and (strings_fit or _within_lengths(card, limits.max_string_length)):
        return []
    issues: list[Issue] = []
    too_deep_reported = False
    for path, value, depth in _walk(card):
        if depth > limits.max_depth and not too_deep_reported:
            too_deep_reported = True
            issues.append(
                make_issue(
                    "limit-depth",
                    path,
                    f"the card nests {depth} levels deep here; at most {limits.max_depth} are accepted",
                )
            )
        if isinstance(value, str) and len(value) > limits.max_string_length:
            issues.append(_too_long(path, "string", len(value), limits))
        elif isinstance(value, dict):
            issues += [
                _too_long(child(path, key), "key", len(key), limits)
                for key in value
                if len(key) > limits.max_string_length
            ]
    return issues


def _too_long(path: str, noun: str, length: int, limits: CardLimits) -> Issue:
    return make_issue(
        "limit-string-length",
        path,
        f"this {noun} has {length} characters; at most {limits.max_string_length} are accepted",
    )


# The common case is answered without building a pointer for every value (validation is on the
# registration hot path): pointers are built by `_walk` only when something is over a limit.


def _within_depth(root: Any, max_depth: int) -> bool:
    """No value deeper than max_depth, walking containers level by level. `type(...) is` rather
    than isinstance: parsed JSON holds plain dicts and lists, and the test is twice as fast."""
    level = [root] if type(root) is dict or type(root) is list else []
    depth = 0
    while level:
        if depth >= max_depth and any(level):  # the members of these containers are too deep
            return False
        next_level: list[Any] = []
        append = next_level.append
        for container in level:
            for member in container.values() if type(container) is dict else container:
                if type(member) is dict or type(member) is list:
                    append(member)
        level, depth = next_level, depth + 1
    return True


def _within_lengths(root: Any, max_length: int) -> bool:
    stack = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if len(value) > max_length:
                return False
        elif isinstance(value, dict):
            if value and max(map(len, value)) > max_length:
                return False
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
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
