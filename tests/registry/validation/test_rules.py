"""Each rule of the catalogue fires on a minimal bad card, at the right path, and not on the good
card it was made from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from jsonschema import Draft7Validator

from registry.validation import RULES, CardLimits, validate_card
from registry.validation.schema_validation import issues_for_error
from tests.registry.validation import sample_cards
from tests.registry.validation.pointers import resolves_here_or_in_parent


@dataclass(frozen=True)
class Case:
    rule: str
    good: Callable[[], dict[str, Any]]
    change: Callable[[dict[str, Any]], None]
    path: str
    limits: CardLimits | None = None
    raw_size: int | None = None


def put(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets the member at a JSON pointer (creating nothing above it)."""

    def change(card: dict[str, Any]) -> None:
        *parents, last = path[1:].split("/")
        target: Any = card
        for segment in parents:
            target = target[int(segment)] if isinstance(target, list) else target[segment]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(card: dict[str, Any]) -> None:
        *parents, last = path[1:].split("/")
        target: Any = card
        for segment in parents:
            target = target[int(segment)] if isinstance(target, list) else target[segment]
        del target[last]

    return change


def both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(card: dict[str, Any]) -> None:
        for each in changes:
            each(card)

    return change


def more_skills(count: int) -> Callable[[dict[str, Any]], None]:
    def change(card: dict[str, Any]) -> None:
        card["skills"] = [dict(card["skills"][0], id=f"skill-{n}") for n in range(count)]

    return change


v03, v10, v02, v01, hybrid = (
    sample_cards.v03,
    sample_cards.v10,
    sample_cards.v02,
    sample_cards.v01,
    sample_cards.hybrid,
)
GOOD_INTERFACE = {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}

CASES = [
    Case("version-undetectable", v03, both(drop("/url"), drop("/protocolVersion")), ""),
    Case("protocol-version-missing", v03, drop("/protocolVersion"), "/protocolVersion"),
    Case("protocol-version-unknown", v03, put("/protocolVersion", "latest"), "/protocolVersion"),
    Case("protocol-version-unknown", v03, put("/protocolVersion", "0.9.0"), "/protocolVersion"),
    Case(
        "protocol-version-unknown",
        v10,
        put("/supportedInterfaces/0/protocolVersion", "one"),
        "/supportedInterfaces/0/protocolVersion",
    ),
    Case(
        "protocol-version-patch",
        v10,
        put("/supportedInterfaces/0/protocolVersion", "1.0.0"),
        "/supportedInterfaces/0/protocolVersion",
    ),
    Case("required-field-missing", v03, drop("/name"), "/name"),
    Case(
        "required-field-missing",
        v03,
        drop("/securitySchemes/oidc/openIdConnectUrl"),
        "/securitySchemes/oidc/openIdConnectUrl",
    ),
    Case("required-field-missing", v01, drop("/skills/0/id"), "/skills/0/id"),
    Case("required-field-missing", v10, drop("/version"), "/version"),
    Case(
        "required-field-missing",
        v10,
        drop("/supportedInterfaces/1/protocolVersion"),
        "/supportedInterfaces/1/protocolVersion",
    ),
    Case("required-field-missing", v10, put("/provider/organization", None), "/provider/organization"),
    Case("required-field-empty", v10, put("/skills", []), "/skills"),
    Case("required-field-empty", v10, put("/description", ""), "/description"),
    Case("required-field-empty", v10, put("/skills/0/tags", []), "/skills/0/tags"),
    Case("wrong-type", v03, put("/name", 42), "/name"),
    Case("wrong-type", v03, put("/securitySchemes/oidc", "oidc"), "/securitySchemes/oidc"),
    Case("wrong-type", v02, put("/skills/0/tags", "facts"), "/skills/0/tags"),
    Case("wrong-type", v10, put("/capabilities/streaming", "yes"), "/capabilities/streaming"),
    Case("wrong-type", v10, put("/defaultInputModes/0", 7), "/defaultInputModes/0"),
    Case("wrong-type", v10, put("/skills/0", "find-recipe"), "/skills/0"),
    Case("value-not-allowed", v03, put("/securitySchemes/oidc/type", "magic"), "/securitySchemes/oidc/type"),
    Case("oneof-missing", v10, put("/securitySchemes/oidc", {}), "/securitySchemes/oidc"),
    Case(
        "oneof-missing",
        v10,
        put("/securitySchemes/oauth/oauth2SecurityScheme/flows", {}),
        "/securitySchemes/oauth/oauth2SecurityScheme/flows",
    ),
    Case("oneof-conflict", v10, put("/securitySchemes/oidc/mtlsSecurityScheme", {}), "/securitySchemes/oidc"),
    Case("unknown-field", v03, put("/endpoint", "https://agent.example.com"), "/endpoint"),
    Case("unknown-field", v10, put("/default_input_modes", ["text/plain"]), "/default_input_modes"),
    Case("unknown-field", v10, put("/skills/0/inputOutputModes", ["text"]), "/skills/0/inputOutputModes"),
    Case("foreign-version-field", v03, put("/capabilities/extendedAgentCard", True), "/capabilities/extendedAgentCard"),
    Case("foreign-version-field", v03, put("/authentication", {"schemes": ["Bearer"]}), "/authentication"),
    Case("foreign-version-field", v02, put("/iconUrl", "https://facts.example.com/icon.png"), "/iconUrl"),
    Case("compat-schema", hybrid, drop("/protocolVersion"), "/protocolVersion"),
    Case("compat-interface-mismatch", hybrid, put("/url", "https://elsewhere.example.com/a2a"), "/url"),
    Case("preferred-transport-missing", v03, drop("/preferredTransport"), "/preferredTransport"),
    Case("transport-unknown", v03, put("/preferredTransport", "jsonrpc"), "/preferredTransport"),
    Case(
        "transport-unknown",
        v10,
        put("/supportedInterfaces/0/protocolBinding", "SOAP"),
        "/supportedInterfaces/0/protocolBinding",
    ),
    Case("transport-conflict", v03, put("/additionalInterfaces/0/transport", "HTTP+JSON"), "/url"),
    Case(
        "interface-completeness",
        v03,
        put("/additionalInterfaces/0/url", "https://agent.example.com/v1"),
        "/additionalInterfaces",
    ),
    Case("interface-duplicate", v10, put("/supportedInterfaces/1", dict(GOOD_INTERFACE)), "/supportedInterfaces/1"),
    Case(
        "interface-duplicate",
        v03,
        put("/additionalInterfaces/1", {"url": "https://agent.example.com/a2a", "transport": "JSONRPC"}),
        "/additionalInterfaces/1",
    ),
    Case("url-invalid", v03, put("/url", "agent.example.com/a2a"), "/url"),
    Case("url-invalid", v03, put("/url", ""), "/url"),
    Case("url-invalid", v10, put("/supportedInterfaces/0/url", "/a2a"), "/supportedInterfaces/0/url"),
    Case("url-invalid", v10, put("/supportedInterfaces/1/url", "agent.example.com:443"), "/supportedInterfaces/1/url"),
    Case(
        "url-invalid",
        v10,
        put("/supportedInterfaces/0/url", "https://a_b.example.com/a2a"),
        "/supportedInterfaces/0/url",
    ),
    Case("url-invalid", v03, put("/provider/url", "https://example.com:70000"), "/provider/url"),
    Case(
        "url-template-placeholder",
        v10,
        put("/supportedInterfaces/0/url", "https://<AGENT_HOST>/a2a"),
        "/supportedInterfaces/0/url",
    ),
    Case("url-template-placeholder", v03, put("/documentationUrl", "https://{{docs_host}}/docs"), "/documentationUrl"),
    Case("url-scheme", v03, put("/url", "ftp://agent.example.com/a2a"), "/url"),
    Case(
        "url-scheme",
        v10,
        put("/supportedInterfaces/0/url", "grpc://agent.example.com:443"),
        "/supportedInterfaces/0/url",
    ),  # grpc:// is for GRPC interfaces only
    Case("url-insecure", v03, put("/url", "http://agent.example.com/a2a"), "/url"),
    Case(
        "url-insecure",
        v10,
        put("/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/tokenUrl", "http://example.com/token"),
        "/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/tokenUrl",
    ),
    Case("url-insecure", v03, put("/provider/url", "http://example.com"), "/provider/url"),
    Case("skill-id-duplicate", v03, lambda card: card["skills"].append(dict(card["skills"][0])), "/skills/1/id"),
    Case("security-scheme-undeclared", v03, put("/security/0", {"apikey": []}), "/security/0/apikey"),
    Case(
        "security-scheme-undeclared",
        v03,
        put("/skills/0/security/0", {"oauth": ["read"]}),
        "/skills/0/security/0/oauth",
    ),
    Case(
        "security-scheme-undeclared",
        v10,
        put("/skills/0/securityRequirements/0/schemes", {"mtls": {}}),
        "/skills/0/securityRequirements/0/schemes/mtls",
    ),
    Case("security-scheme-undeclared", v10, drop("/securitySchemes"), "/securityRequirements/0/schemes/oidc"),
    Case(
        "security-requirement-shape",
        v10,
        put("/securityRequirements/0", {"oidc": ["openid"]}),
        "/securityRequirements/0",
    ),
    Case("media-type-invalid", v03, put("/defaultInputModes/0", "text"), "/defaultInputModes/0"),
    Case("media-type-invalid", v10, put("/skills/0/inputModes/0", "plain text"), "/skills/0/inputModes/0"),
    Case("tag-blank", v03, put("/skills/0/tags/1", "  "), "/skills/0/tags/1"),
    Case("limit-card-bytes", v03, lambda card: None, "", raw_size=300 * 1024),
    Case("limit-card-bytes", v03, put("/description", "x" * 5000), "", limits=CardLimits(max_card_bytes=4096)),
    Case(
        "limit-depth",
        v10,
        put("/capabilities/extensions", [{"uri": "urn:x", "params": {"a": {"b": {"c": {"d": {"e": {}}}}}}}]),
        "/capabilities/extensions/0/params/a/b/c/d/e",
        limits=CardLimits(max_depth=8),
    ),
    Case(
        "limit-string-length",
        v03,
        put("/description", "x" * 101),
        "/description",
        limits=CardLimits(max_string_length=100),
    ),
    Case("limit-skills", v03, more_skills(3), "/skills", limits=CardLimits(max_skills=2)),
    Case(
        "limit-tags",
        v03,
        put("/skills/0/tags", ["a", "b", "c"]),
        "/skills/0/tags",
        limits=CardLimits(max_tags_per_skill=2),
    ),
    Case(
        "limit-examples",
        v03,
        put("/skills/0/examples", ["a", "b", "c"]),
        "/skills/0/examples",
        limits=CardLimits(max_examples_per_skill=2),
    ),
    Case(
        "limit-interfaces",
        v10,
        lambda card: card["supportedInterfaces"].append(dict(GOOD_INTERFACE, url="https://b.example.com")),
        "/supportedInterfaces",
        limits=CardLimits(max_interfaces=2),
    ),
    Case(
        "limit-modes",
        v03,
        put("/defaultOutputModes", ["text/plain", "text/html", "image/png"]),
        "/defaultOutputModes",
        limits=CardLimits(max_modes=2),
    ),
    Case(
        "limit-security-schemes",
        v10,
        put("/securitySchemes/third", {"mtlsSecurityScheme": {}}),
        "/securitySchemes",
        limits=CardLimits(max_security_schemes=2),
    ),
    Case(
        "limit-signatures",
        v10,
        lambda card: card["signatures"].append(dict(card["signatures"][0])),
        "/signatures",
        limits=CardLimits(max_signatures=1),
    ),
]
# Rules whose bad input is not a changed card, or that the shipped schemas cannot trigger; each
# has its own test below.
TESTED_APART = {"card-not-object", "no-matching-variant", "schema-violation"}


def case_id(case: Case) -> str:
    return f"{case.rule}:{case.good.__name__}:{case.path or '(card)'}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(case) for case in CASES])
def test_rule_fires_on_the_bad_card_only(case: Case) -> None:
    good = case.good()
    assert case.rule not in {i.rule for i in validate_card(good, limits=case.limits).issues}
    bad = case.good()
    case.change(bad)
    report = validate_card(bad, limits=case.limits, raw_size=case.raw_size)
    fired = [issue for issue in report.issues if issue.rule == case.rule]
    assert [issue.path for issue in fired].count(case.path) >= 1, [i.to_dict() for i in report.issues]
    assert all(issue.severity == RULES[case.rule].severity for issue in fired)
    assert all(resolves_here_or_in_parent(bad, issue.path) for issue in report.issues)
    assert report.valid is not any(issue.severity == "error" for issue in report.issues)
    if RULES[case.rule].severity == "error":
        assert not report.valid


def test_every_rule_of_the_catalogue_is_tested() -> None:
    assert {case.rule for case in CASES} | TESTED_APART == set(RULES)


@pytest.mark.parametrize("value", [None, [], "card", 3, 1.5, True, [{"name": "x"}]])
def test_a_card_that_is_not_an_object_is_an_issue_not_an_exception(value: Any) -> None:
    report = validate_card(value)
    assert not report.valid
    assert [(i.rule, i.path) for i in report.issues] == [("card-not-object", "")]
    assert (report.flavor, report.protocol_version) == (None, None)


def test_unions_without_a_discriminator_report_no_matching_variant() -> None:
    # No AgentCard union of the shipped schemas lacks a `type` discriminator; the rule guards
    # schemas to come, so it is exercised on a schema of that shape.
    schema = {"anyOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]}
    issues = [i for e in Draft7Validator(schema).iter_errors({"c": 1}) for i in issues_for_error(e, "0.3.0")]
    assert [(i.rule, i.path) for i in issues] == [("no-matching-variant", "")]


def test_other_schema_keywords_report_schema_violation() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "maxItems": 1}}}
    issues = [i for e in Draft7Validator(schema).iter_errors({"tags": [1, 2]}) for i in issues_for_error(e, "0.3.0")]
    assert [(i.rule, i.path, i.severity) for i in issues] == [("schema-violation", "/tags", "error")]


def test_oversized_card_is_not_examined_further_but_its_version_is_told() -> None:
    report = validate_card(sample_cards.v10(), raw_size=10**7)
    assert [i.rule for i in report.issues] == ["limit-card-bytes"]
    assert report.flavor == "1.0"


def test_hybrid_is_valid_when_its_1_0_part_is_even_if_the_0_3_view_is_broken() -> None:
    card = sample_cards.hybrid()
    card["preferredTransport"] = 17
    report = validate_card(card)
    assert report.valid
    assert "compat-schema" in {i.rule for i in report.warnings}


def test_a_1_0_card_restating_protocol_version_1_0_is_not_a_hybrid() -> None:
    card = sample_cards.v10()
    card["protocolVersion"] = "1.0"
    report = validate_card(card)
    assert (report.valid, report.flavor) == (True, "1.0")
    assert [(i.rule, i.path) for i in report.issues] == [("foreign-version-field", "/protocolVersion")]


def test_grpc_urls_are_fine_for_grpc_interfaces() -> None:
    card = sample_cards.v03()
    card["additionalInterfaces"][1]["url"] = "grpcs://agent.example.com:443"
    assert validate_card(card).issues == []


def test_card_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="max_skills"):
        CardLimits(max_skills=0)


@pytest.mark.parametrize(
    ("mode", "is_media_type"),
    [
        ("text/plain", True),
        ("application/vnd.geo+json", True),
        ("text/plain; charset=utf-8", True),
        ("image/*", True),
        ("*/*", True),
        ("text", False),
        ("text/", False),
        ("text/plain\n", False),
        ("text/plain html", False),
    ],
)
def test_media_types(mode: str, is_media_type: bool) -> None:
    card = sample_cards.v10()
    card["defaultOutputModes"] = [mode]
    assert ("media-type-invalid" in {i.rule for i in validate_card(card).issues}) is not is_media_type
