"""`agentdex card validate FILE_OR_URL`: judge an Agent Card offline with the registry's own validator.

Exit codes (cli.exits): 0 the card is valid, 1 it is not, 2 usage (no such file, not JSON),
4 the URL could not be fetched. URLs are discovered by the registry's own `CardFetcher`.
`--format github|junit` prints the issues for a CI system (`cli.ci_report`).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from cli.card import card
from cli.ci_report import CI_FORMATS, FORMATS, Case, CheckedFile, Finding, chosen_format, render
from cli.exits import CliError, ExitCode, reports_errors
from cli.files import STDIO, parse_json, read_bytes

if TYPE_CHECKING:
    from registry.validation import ValidationReport


@card.command("validate")
@click.argument("source", metavar="FILE_OR_URL")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="github: workflow annotations; junit: a JUnit XML report.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json).")
@reports_errors
def validate(source: str, output_format: str, as_json: bool) -> None:
    """Check the Agent Card in FILE (`-` reads standard input) or at URL.

    \b
    A URL is looked up the way the registry discovers cards: a URL ending in
    .json or /agentCard is the card itself; otherwise these are tried in turn,
    each under the URL's path and then at the root:
      /.well-known/agent-card.json
      /.well-known/agent.json  (agents before A2A 0.3)
      /agentCard               (agents that serve their card there; tried last)

    The report names the protocol version the card is judged by (0.1, 0.2, 0.3, 1.0, or a 1.0
    card with 0.3 fields) and lists every problem with its place in the card, its rule and
    whether it is an error or a warning.

    --format github prints one GitHub workflow annotation per issue, --format junit a JUnit XML
    report (a testcase for the card, a failure per error), for CI systems to show.

    Exits 0 when the card is valid, 1 when it has errors, 2 when the file cannot be read or is
    not JSON, 4 when no card can be fetched from the URL.

    \f
    Raises CliError: exit 2 for a missing or unreadable file or input that is not JSON, or for
    --json with another --format; exit 4 for a URL that cannot be fetched.
    """
    from registry.validation import validate_card  # lazy: `agentdex --help` should not load jsonschema

    output_format = chosen_format(output_format, as_json)
    raw = _read_source(source)
    report = validate_card(parse_json(raw, source), raw_size=len(raw))
    click.echo(_formatted(report, source, output_format))
    if not report.valid:
        sys.exit(int(ExitCode.FAILED))


def _formatted(report: ValidationReport, source: str, output_format: str) -> str:
    if output_format in CI_FORMATS:
        return render(checked_card(report, source), output_format)
    return json.dumps(report.to_dict(), indent=2) if output_format == "json" else describe_report(report, source)


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
