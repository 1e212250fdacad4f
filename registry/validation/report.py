"""What validation returns: issues as data, the report that collects them, and the rule catalogue.

Severity is a property of the rule, never of the call site: a client filtering on `rule` can rely on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Rule:
    severity: Severity
    checks: str


ERROR: Severity = "error"
WARNING: Severity = "warning"

RULES: dict[str, Rule] = {
    # Shape of the document and the version it targets.
    "card-not-object": Rule(ERROR, "the card is a JSON object"),
    "version-undetectable": Rule(ERROR, "the card carries the fields that identify a protocol version"),
    "protocol-version-missing": Rule(WARNING, "a 0.2-style card declares `protocolVersion` (required since v0.2.5)"),
    "protocol-version-unknown": Rule(WARNING, "a declared protocol version is a known Major.Minor[.Patch] version"),
    "protocol-version-patch": Rule(WARNING, "v1.x interfaces declare Major.Minor only (A2A v1.0 §3.6)"),
    # Structure: the official JSON Schema (0.x) or the v1.0 field table.
    "required-field-missing": Rule(ERROR, "every REQUIRED field is present"),
    "required-field-empty": Rule(ERROR, "v1.0 REQUIRED fields are not empty (proto3: empty means unset)"),
    "wrong-type": Rule(ERROR, "every field has the JSON type its schema or field table gives"),
    "value-not-allowed": Rule(ERROR, "enumerated and constant fields hold an allowed value"),
    "no-matching-variant": Rule(ERROR, "a union (e.g. SecurityScheme) matches one of its variants"),
    "oneof-missing": Rule(ERROR, "a v1.0 SecurityScheme / OAuthFlows sets one member of its oneof"),
    "oneof-conflict": Rule(ERROR, "a v1.0 oneof sets no more than one member"),
    "schema-violation": Rule(ERROR, "any other constraint of the official JSON Schema"),
    "unknown-field": Rule(WARNING, "fields are defined by the detected protocol version"),
    "foreign-version-field": Rule(WARNING, "fields belong to the detected version, not another one"),
    # Hybrid 1.0 + 0.3 cards.
    "compat-schema": Rule(WARNING, "the 0.3 compatibility fields of a hybrid card pass the v0.3.0 schema"),
    "compat-interface-mismatch": Rule(
        WARNING, "a hybrid's `url`/`preferredTransport` is one of its supportedInterfaces"
    ),
    # Transports and URLs (A2A v0.3 §5.6, §3.1, §4.1).
    "preferred-transport-missing": Rule(WARNING, "a v0.3 card declares `preferredTransport` (§5.6.1)"),
    "transport-unknown": Rule(WARNING, "transports are JSONRPC, GRPC or HTTP+JSON (§5.5.5; case-sensitive)"),
    "transport-conflict": Rule(ERROR, "the same URL does not declare conflicting transports (§5.6.4)"),
    "interface-completeness": Rule(WARNING, "`additionalInterfaces` includes the main url/preferredTransport (§5.6.4)"),
    "interface-duplicate": Rule(WARNING, "no interface is declared twice"),
    "url-invalid": Rule(
        ERROR, "URLs are absolute RFC 3986 URLs: a valid host name or IP address, a port 1-65535, no credentials"
    ),
    "url-template-placeholder": Rule(
        ERROR, "URLs hold no unfilled template placeholder such as <AGENT_HOST>, {host} or ${HOST}"
    ),
    "url-scheme": Rule(ERROR, "URLs use http(s); gRPC interfaces may also use grpc(s)/dns (§3.1)"),
    "url-insecure": Rule(WARNING, "URLs use https in production (§4.1)"),
    # Content.
    "skill-id-duplicate": Rule(ERROR, "skill ids are unique within the card (§5.5.4)"),
    "security-scheme-undeclared": Rule(
        ERROR, "security requirements name schemes declared in `securitySchemes` (OpenAPI 3.0)"
    ),
    "security-requirement-shape": Rule(ERROR, "v1.0 security requirements use {schemes: {name: {list: [...]}}}"),
    "media-type-invalid": Rule(WARNING, "input/output modes are media types such as text/plain (§5.5)"),
    "tag-blank": Rule(WARNING, "skill tags are not blank"),
    # Size and count limits of this registry (CardLimits).
    "limit-card-bytes": Rule(ERROR, "the serialised card is no larger than max_card_bytes"),
    "limit-depth": Rule(ERROR, "the card nests no deeper than max_depth"),
    "limit-string-length": Rule(ERROR, "no string or key is longer than max_string_length"),
    "limit-skills": Rule(ERROR, "no more than max_skills skills"),
    "limit-tags": Rule(ERROR, "no more than max_tags_per_skill tags per skill"),
    "limit-examples": Rule(ERROR, "no more than max_examples_per_skill examples per skill"),
    "limit-interfaces": Rule(ERROR, "no more than max_interfaces interfaces"),
    "limit-modes": Rule(ERROR, "no more than max_modes entries in a modes list"),
    "limit-security-schemes": Rule(ERROR, "no more than max_security_schemes security schemes"),
    "limit-signatures": Rule(ERROR, "no more than max_signatures signatures"),
}


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
