"""`agentdex card validate FILE_OR_URL...`: judge Agent Cards offline with the registry's own validator.

Every source is judged, also when one before it cannot be read (a pre-commit hook passes all the
cards a commit touches in one call). Exit codes (cli.exits): 0 every card is valid, 1 one is not,
2 usage (no such file, not JSON), 4 a URL could not be fetched; the worst of them wins, in the order
2, 4, 1. URLs are discovered by the registry's own `CardFetcher`. `--format github|junit` prints
the issues for a CI system (`cli.ci_report`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from cli.card import card
from cli.ci_report import CI_FORMATS, Case, CheckedFile, Finding, chosen_format, format_option, render
from cli.exits import CliError, ExitCode, reports_errors
from cli.files import STDIO, parse_json, read_bytes

if TYPE_CHECKING:
    from registry.validation import ValidationReport

# Which failure decides the exit code when several sources fail in different ways.
_EXIT_PRECEDENCE = (ExitCode.USAGE, ExitCode.UNREACHABLE, ExitCode.UNRESOLVED, ExitCode.FAILED)
# The rule id a source that could not be judged is reported under (GitHub title, JUnit type).
_FAILURE_RULES = {ExitCode.USAGE: "unreadable", ExitCode.UNREACHABLE: "unreachable"}


@dataclasses.dataclass(frozen=True)
class Judged:
    """One source's outcome: the validator's report, or the failure that kept it from being judged."""

    source: str
    report: ValidationReport | None = None
    failure: CliError | None = None

    def as_json(self) -> dict[str, Any]:
        """`{"source", "report"}`, or `{"source", "error": {"code", "message"}}` as a failing command prints it."""
        if self.report is not None:
            return {"source": self.source, "report": self.report.to_dict()}
        code = self.failure.code if self.failure is not None else "failed"
        return {"source": self.source, "error": {"code": code, "message": str(self.failure)}}


@card.command("validate")
@click.argument("sources", metavar="FILE_OR_URL...", nargs=-1, required=True)
@format_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json).")
@reports_errors
def validate(sources: tuple[str, ...], output_format: str, as_json: bool) -> None:
    """Check the Agent Card in each FILE (`-` reads standard input) or at each URL.

    \b
    Several cards are checked in one call, e.g. by a pre-commit hook:
      agentdex card validate agent-card.json agents/*.agent-card.json

    \b
    A URL is looked up the way the registry discovers cards: a URL ending in
    .json or /agentCard is the card itself; otherwise these are tried in turn,
    each under the URL's path and then at the root:
      /.well-known/agent-card.json
      /.well-known/agent.json  (agents before A2A 0.3)
      /agentCard               (agents that serve their card there; tried last)

    The report names the protocol version each card is judged by (0.1, 0.2, 0.3, 1.0, or a 1.0
    card with 0.3 fields) and lists every problem with its place in the card, its rule and
    whether it is an error or a warning. A file that cannot be read is named on standard error
    and the other cards are still checked.

    --json prints the report of one card, or for several a list of {"source", "report"} (or
    {"source", "error"} for one that could not be read). --format github prints one GitHub
    workflow annotation per issue, --format junit one JUnit XML report with a testsuite per
    card, for CI systems to show.

    Exits 0 when every card is valid, 1 when one has errors, 2 when a file cannot be read or is
    not JSON, 4 when no card can be fetched from a URL (2 before 4 before 1 when several apply).

    \f
    Raises CliError: exit 2 for --json with another --format, and, with a single source, for a
    missing or unreadable file or input that is not JSON; exit 4 for a single URL that cannot be
    fetched. With several sources these are reported per source and decide the exit code.
    """
    output_format = chosen_format(output_format, as_json)
    judged = [_judge(source) for source in sources]
    if len(judged) == 1 and judged[0].failure is not None:
        raise judged[0].failure  # one source: its failure is the command's, as before several were taken
    for outcome in judged:
        if outcome.failure is not None:
            click.echo(f"error: {outcome.failure}", err=True)
    click.echo(_formatted(judged, output_format))
    sys.exit(int(exit_code(judged)))


def _judge(source: str) -> Judged:
    from registry.validation import validate_card  # lazy: `agentdex --help` should not load jsonschema

    try:
        raw = _read_source(source)
        return Judged(source, report=validate_card(parse_json(raw, source), raw_size=len(raw)))
    except CliError as error:
        return Judged(source, failure=error)


def exit_code(judged: Sequence[Judged]) -> ExitCode:
    """The exit code for all the sources: the gravest failure (2, then 4), else 1 for an invalid card."""
    codes = {outcome.failure.exit_code for outcome in judged if outcome.failure is not None}
    if any(outcome.report is not None and not outcome.report.valid for outcome in judged):
        codes.add(ExitCode.FAILED)
    return next((code for code in _EXIT_PRECEDENCE if code in codes), ExitCode.OK)


def _formatted(judged: Sequence[Judged], output_format: str) -> str:
    if output_format in CI_FORMATS:
        return render([_checked(outcome) for outcome in judged], output_format)
    if output_format == "json":
        return json.dumps(_as_json(judged), indent=2)
    return "\n".join(describe_report(o.report, o.source) for o in judged if o.report is not None)


def _as_json(judged: Sequence[Judged]) -> Any:
    # One source keeps the shape `card validate --json` has always printed: the report itself.
    if len(judged) == 1 and judged[0].report is not None:
        return judged[0].report.to_dict()
    return [outcome.as_json() for outcome in judged]


def _checked(outcome: Judged) -> CheckedFile:
    if outcome.report is not None:
        return checked_card(outcome.report, outcome.source)
    failure = outcome.failure
    rule = _FAILURE_RULES.get(failure.exit_code, failure.code) if failure else "failed"
    return CheckedFile(outcome.source, (Case("card", (Finding("error", rule, str(failure)),)),))


def checked_card(report: ValidationReport, source: str) -> CheckedFile:
    """The report as one case (the card) for `cli.ci_report`, each issue with its place in the card."""
    findings = tuple(
        Finding(issue.severity, issue.rule, f"{issue.path}: {issue.message}" if issue.path else issue.message)
        for issue in report.issues
    )
    return CheckedFile(source, (Case("card", findings),))


def _read_source(source: str) -> bytes:
    if source.startswith(("http://", "https://")):
        return _fetch(source)
    return read_bytes(source)


def _fetch(url: str) -> bytes:
    """The card body at `url`, found with the registry's own discovery and outbound client.

    The address policy of a server (no private or loopback targets) protects a registry from its
    callers; on a person's own machine any address they name is theirs to check, so all are allowed.
    """
    import ipaddress

    from registry.catalog.fetcher import CardFetcher, CardFetchError
    from registry.outbound import OutboundError, OutboundPolicy, SafeHttpClient

    policy = OutboundPolicy(
        allow_http=True, allowed_networks=(ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0"))
    )
    with SafeHttpClient(policy) as client:
        try:
            return CardFetcher(client).discover(url).body
        except (CardFetchError, OutboundError) as error:
            raise CliError(f"cannot fetch a card from {url}: {error}", ExitCode.UNREACHABLE) from None


def describe_report(report: ValidationReport, source: str) -> str:
    """The human form: a verdict line with the detected version, then one line per issue."""
    name = "standard input" if source == STDIO else source
    version = f"A2A {report.protocol_version}" if report.protocol_version else "unknown A2A version"
    if report.flavor and report.flavor != report.protocol_version:
        version += f" (judged as {report.flavor})"
    counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
    lines = [f"{name}: {'valid' if report.valid else 'INVALID'} — {version}; {counts}"]
    lines += [
        f"  {issue.severity:<7}  {issue.path or '(card)'}  [{issue.rule}]  {issue.message}" for issue in report.issues
    ]
    return "\n".join(lines)
