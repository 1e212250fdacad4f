"""What validation returns: issues as data and the report that collects them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from registry.validation.rules import RULES

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """One problem found in a card.

    `path` is an RFC 6901 JSON pointer into the card ("" is the card itself); for a missing
    field it names the field that should be there, so its parent always resolves.
    """

    path: str
    rule: str
    severity: Severity
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "severity": self.severity, "message": self.message}


def make_issue(rule: str, path: str, message: str) -> Issue:
    """Build an issue whose severity comes from the rule catalogue, so a rule never changes severity."""
    return Issue(path=path, rule=rule, severity=RULES[rule].severity, message=message)


@dataclass(frozen=True)
class ValidationReport:
    """Every issue found in one card, with the protocol version it was judged against.

    `flavor` is one of "1.0", "1.0+0.3", "0.3", "0.2", "0.1", or None when the version cannot
    be told; `protocol_version` is the card's declared (or, for 0.1/0.2/1.0 cards, inferred) version.
    """

    protocol_version: str | None
    flavor: str | None
    issues: list[Issue] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.severity == "warning"]

    @property
    def valid(self) -> bool:
        return not any(issue.severity == "error" for issue in self.issues)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "protocolVersion": self.protocol_version,
            "flavor": self.flavor,
            "issues": [issue.to_dict() for issue in self.issues],
        }


def unique_in_order(issues: Iterable[Issue]) -> list[Issue]:
    """Drop repeats (two checks may reach the same conclusion) while keeping the order found."""
    return list(dict.fromkeys(issues))
