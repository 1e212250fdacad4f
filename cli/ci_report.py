"""Reports made for CI systems, shared by `card validate` and `card verify` (`--format github|junit`).

A command turns its own result into one `CheckedFile` (the cases it checked, each with its
findings); this module prints it as GitHub workflow commands or as a JUnit XML report. Nothing
here knows about cards or signatures.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Literal

import click

from cli.exits import CliError, ExitCode
from cli.files import STDIO

FORMATS = ("text", "json", "github", "junit")
CI_FORMATS = ("github", "junit")

format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="github: workflow annotations; junit: a JUnit XML report.",
)

Severity = Literal["error", "warning"]

# Characters XML 1.0 cannot hold at all (§2.2), even escaped: a card's text may carry them.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclasses.dataclass(frozen=True)
class Finding:
    """One problem: an error fails its case, a warning only reports."""

    severity: Severity
    rule: str
    message: str


@dataclasses.dataclass(frozen=True)
class Case:
    """One thing checked in a file (the card, one signature), with what was found."""

    name: str
    findings: tuple[Finding, ...] = ()

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


@dataclasses.dataclass(frozen=True)
class CheckedFile:
    """Everything one command checked in one file (`-` for standard input)."""

    path: str
    cases: tuple[Case, ...]


def chosen_format(output_format: str, as_json: bool) -> str:
    """The format asked for: `--json` is `--format json`. Raises CliError (exit 2) when they contradict."""
    if as_json and output_format not in ("text", "json"):
        raise CliError(f"--json contradicts --format {output_format}", ExitCode.USAGE)
    return "json" if as_json else output_format


def render(checked: Sequence[CheckedFile], output_format: str) -> str:
    """The files checked, in one of CI_FORMATS. Raises ValueError for any other format (a bug in
    the caller)."""
    if output_format == "github":
        return github_annotations(checked)
    if output_format == "junit":
        return junit_report(checked)
    raise ValueError(f"not a CI report format: {output_format!r}")


def github_annotations(checked: Sequence[CheckedFile]) -> str:
    """One workflow command per finding: `::error file=<path>,title=<rule>::<message>` (warnings as
    `::warning`). Standard input names no file, so its annotations carry no `file` property."""
    lines = []
    for one in checked:
        for case in one.cases:
            for finding in case.findings:
                properties = {"file": one.path} if one.path != STDIO else {}
                properties["title"] = finding.rule
                joined = ",".join(f"{name}={_escape_property(value)}" for name, value in properties.items())
                lines.append(f"::{finding.severity} {joined}::{_escape_data(finding.message)}")
    return "\n".join(lines)


def _escape_data(value: str) -> str:
    # GitHub's rules for a workflow command's message (actions/toolkit, command.ts escapeData).
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    # ... and for its properties, which `:` and `,` would otherwise end (command.ts escapeProperty).
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def junit_report(checked: Sequence[CheckedFile]) -> str:
    """A JUnit XML report: a testsuite per file, a testcase per case, a `failure` per error (`type`
    the rule id, `message` the message); warnings go to the case's `system-out`."""
    import xml.etree.ElementTree as ET  # noqa: N817 (only the JUnit format needs it)

    root = ET.Element("testsuites")
    for one in checked:
        name = "standard input" if one.path == STDIO else one.path
        failing = sum(1 for case in one.cases if case.errors)
        counts = {"tests": str(len(one.cases)), "failures": str(failing), "errors": "0"}
        suite = ET.SubElement(root, "testsuite", {"name": _xml(name), **counts, "skipped": "0"})
        for case in one.cases:
            element = ET.SubElement(suite, "testcase", classname=_xml(name), name=_xml(case.name))
            for finding in case.errors:
                failure = ET.SubElement(element, "failure", type=_xml(finding.rule), message=_xml(finding.message))
                failure.text = _xml(f"[{finding.rule}] {finding.message}")
            if case.warnings:
                warnings = "\n".join(f"warning [{w.rule}] {w.message}" for w in case.warnings)
                ET.SubElement(element, "system-out").text = _xml(warnings)
    for count in ("tests", "failures", "errors"):
        root.set(count, str(sum(int(suite.get(count, "0")) for suite in root)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _xml(text: str) -> str:
    """`text` with what XML cannot hold replaced by U+FFFD, so the report always parses."""
    return _NOT_XML.sub("\ufffd", text)
