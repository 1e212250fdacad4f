"""Agent Card validation: one validator for the API, the CLI and the crawler.

    from registry.validation import validate_card, summarize_card, CardLimits
    report = validate_card(card, raw_size=len(body))   # never raises; every issue at once
    if report.valid:
        summary = summarize_card(card)

How a card is judged (see `detection` for the signals):
- v0.1, v0.2.x, v0.3: the official JSON Schema of the closest version (`schemas/`, with
  their sources in `schemas/SOURCES.md`): 0.1.0, 0.2.0 (0.2 cards without `protocolVersion`),
  0.2.5, 0.2.6, 0.3.0 (also 0.2.7–0.2.9, never released, which 0.3-era documents declare);
- v1.0: the REQUIRED fields and kinds of the v1.0 field table, recursively (`field_table`);
- hybrid v1.0 + 0.3 (what the a2a-sdk 1.x serves): valid when the 1.0 part is valid; the 0.3
  view is still checked against the v0.3 schema, as warnings (`compat-schema`);
- then the semantic rules of the spec and the registry's size limits (`CardLimits`).

An issue is data: {path (JSON pointer), rule, severity, message}. A card is valid when no
issue is an error. The rule catalogue (`rules.RULES`; the severity of a rule never varies):

    rule                         severity checks
    card-not-object              error    the card is a JSON object
    version-undetectable         error    the card carries the fields that identify a protocol version
    protocol-version-missing     warning  a 0.2-style card declares `protocolVersion` (required since v0.2.5)
    protocol-version-unknown     warning  a declared protocol version is a known Major.Minor[.Patch] version
    protocol-version-patch       warning  v1.x interfaces declare Major.Minor only (A2A v1.0 §3.6)
    required-field-missing       error    every REQUIRED field is present
    required-field-empty         error    v1.0 REQUIRED fields are not empty (proto3: empty means unset)
    wrong-type                   error    every field has the JSON type its schema or field table gives
    value-not-allowed            error    enumerated and constant fields hold an allowed value
    no-matching-variant          error    a union (e.g. SecurityScheme) matches one of its variants
    oneof-missing                error    a v1.0 SecurityScheme / OAuthFlows sets one member of its oneof
    oneof-conflict               error    a v1.0 oneof sets no more than one member
    schema-violation             error    any other constraint of the official JSON Schema
    unknown-field                warning  fields are defined by the detected protocol version
    foreign-version-field        warning  fields belong to the detected version, not another one
    compat-schema                warning  the 0.3 compatibility fields of a hybrid card pass the v0.3.0 schema
    compat-interface-mismatch    warning  a hybrid's `url`/`preferredTransport` is one of its supportedInterfaces
    preferred-transport-missing  warning  a v0.3 card declares `preferredTransport` (§5.6.1)
    transport-unknown            warning  transports are JSONRPC, GRPC or HTTP+JSON (§5.5.5; case-sensitive)
    transport-conflict           error    the same URL does not declare conflicting transports (§5.6.4)
    interface-completeness       warning  `additionalInterfaces` includes the main url/preferredTransport (§5.6.4)
    interface-duplicate          warning  no interface is declared twice
    url-invalid                  error    URLs are absolute (scheme and host)
    url-scheme                   error    URLs use http(s); gRPC interfaces may also use grpc(s)/dns (§3.1)
    url-insecure                 warning  URLs use https in production (§4.1)
    skill-id-duplicate           error    skill ids are unique within the card (§5.5.4)
    security-scheme-undeclared   error    security requirements name schemes declared in `securitySchemes` (OpenAPI 3.0)
    security-requirement-shape   error    v1.0 security requirements use {schemes: {name: {list: [...]}}}
    media-type-invalid           warning  input/output modes are media types such as text/plain (§5.5)
    tag-blank                    warning  skill tags are not blank
    limit-card-bytes             error    the serialised card is no larger than max_card_bytes
    limit-depth                  error    the card nests no deeper than max_depth
    limit-string-length          error    no string or key is longer than max_string_length
    limit-skills                 error    no more than max_skills skills
    limit-tags                   error    no more than max_tags_per_skill tags per skill
    limit-examples               error    no more than max_examples_per_skill examples per skill
    limit-interfaces             error    no more than max_interfaces interfaces
    limit-modes                  error    no more than max_modes entries in a modes list
    limit-security-schemes       error    no more than max_security_schemes security schemes
    limit-signatures             error    no more than max_signatures signatures
"""

from registry.validation.limits import CardLimits
from registry.validation.report import Issue, ValidationReport
from registry.validation.rules import RULES, Rule
from registry.validation.summary import CardSummary, InterfaceSummary, SkillSummary, summarize_card
from registry.validation.validator import validate_card

__all__ = [
    "RULES",
    "CardLimits",
    "CardSummary",
    "InterfaceSummary",
    "Issue",
    "Rule",
    "SkillSummary",
    "ValidationReport",
    "summarize_card",
    "validate_card",
]
