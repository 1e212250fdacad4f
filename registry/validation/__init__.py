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

An issue is data: {path (JSON pointer), rule, severity, message}. A card is valid when no issue
is an error. `RULES` is the rule catalogue: every rule id, its fixed severity and what it checks.
"""

from registry.validation.limits import CardLimits
from registry.validation.report import RULES, Issue, Rule, ValidationReport
from registry.validation.summary import CardSummary, InterfaceSummary, SkillSummary, summarize_card
from registry.validation.urls import UrlParts, UrlProblem, check_url_syntax
from registry.validation.validator import validate_card

__all__ = [
    "RULES",
    "CardLimits",
    "CardSummary",
    "InterfaceSummary",
    "Issue",
    "Rule",
    "SkillSummary",
    "UrlParts",
    "UrlProblem",
    "ValidationReport",
    "check_url_syntax",
    "summarize_card",
    "validate_card",
]
