"""`agentdex card validate | verify --format github | junit`: what a CI system picks up, read back
the way it reads it (workflow command lines, a JUnit report parsed by ElementTree)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner, Result

from cli.ci_report import Case, CheckedFile, Finding, github_annotations, junit_report
from cli.main import cli
from signing import generate_key, public_jwks, sign_card
from tests.registry.validation import sample_cards
from tests.support.cards import make_card


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def card_without_version(tmp_path: Path) -> str:
    card = sample_cards.v10()
    del card["version"]
    card["defaultInputModes"] = ["text"]
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return str(path)


def test_validate_github_prints_one_annotation_per_issue(tmp_path: Path) -> None:
    path = card_without_version(tmp_path)
    result = run("card", "validate", "--format", "github", path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"::error file={path},title=required-field-missing::/version: required field `version` is missing "
        "(A2A v1.0 AgentCard)",
        f"::warning file={path},title=media-type-invalid::/defaultInputModes/0: "
        + json.loads(run("card", "validate", "--json", path).stdout)["issues"][1]["message"],
    ]


def test_annotations_escape_what_github_would_read_as_syntax() -> None:
    checked = CheckedFile(
        "cards/a:b,c.json", (Case("card", (Finding("error", "rule:x,y", "100% sure: a, b\r\nnext line"),)),)
    )
    assert github_annotations([checked]) == (
        "::error file=cards/a%3Ab%2Cc.json,title=rule%3Ax%2Cy::100%25 sure: a, b%0D%0Anext line"
    )


def test_standard_input_names_no_file() -> None:
    result = CliRunner().invoke(cli, ["card", "validate", "--format", "github", "-"], input='{"name": "x"}')
    assert result.exit_code == 1 and result.stdout.startswith("::error title=")


def test_validate_junit_is_a_report_with_a_failure_per_error(tmp_path: Path) -> None:
    path = card_without_version(tmp_path)
    result = run("card", "validate", "--format", "junit", path)
    assert result.exit_code == 1
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None and suite.get("name") == path and suite.get("failures") == "1"
    (case,) = suite.findall("testcase")
    failures = [(f.get("type"), f.get("message")) for f in case.findall("failure")]
    assert failures == [
        ("required-field-missing", "/version: required field `version` is missing (A2A v1.0 AgentCard)")
    ]
    assert "media-type-invalid" in (case.findtext("system-out") or "")  # a warning does not fail


def test_junit_stays_parseable_whatever_the_text() -> None:
    text = 'a <b> & "c" \x01\x1b ]]> é 🚀'
    report = junit_report([CheckedFile("x.json", (Case(text, (Finding("error", "r", text),)),))])
    failure = ET.fromstring(report).find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == 'a <b> & "c" \ufffd\ufffd ]]> é 🚀'


def test_verify_reports_each_signature(tmp_path: Path) -> None:
    signer, stranger = generate_key("EdDSA"), generate_key("EdDSA")
    signed = sign_card(sign_card(make_card("Weather"), signer), stranger)
    (tmp_path / "card.json").write_text(json.dumps(signed), encoding="utf-8")
    (tmp_path / "jwks.json").write_text(json.dumps(public_jwks([signer])), encoding="utf-8")
    args = ("card", "verify", str(tmp_path / "card.json"), "--jwks", str(tmp_path / "jwks.json"))

    junit = run(*args, "--format", "junit", "--policy", "all")
    assert junit.exit_code == 3  # unchanged by the format: only a key was missing
    cases = ET.fromstring(junit.stdout).findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == [
        f"signature #0 kid={signer.kid}",
        f"signature #1 kid={stranger.kid}",
        "policy all",
    ]
    assert [[f.get("type") for f in c.findall("failure")] for c in cases] == [[], ["key_not_found"], ["policy"]]

    github = run(*args, "--format", "github")  # policy any holds: the stranger's signature only warns
    assert github.exit_code == 0
    assert github.stdout.splitlines() == [
        f"::warning file={tmp_path / 'card.json'},title=key_not_found::signature #1 (kid {stranger.kid}): "
        f"no key found for kid '{stranger.kid}'"
    ]


def test_json_is_an_alias_and_contradicting_it_is_a_usage_error(tmp_path: Path) -> None:
    path = card_without_version(tmp_path)
    assert json.loads(run("card", "validate", "--format", "json", path).stdout) == json.loads(
        run("card", "validate", "--json", path).stdout
    )
    contradiction = run("card", "validate", "--json", "--format", "junit", path)
    assert contradiction.exit_code == 2 and "--json contradicts --format junit" in contradiction.stderr


def two_cards(tmp_path: Path) -> tuple[str, str]:
    valid = tmp_path / "valid.json"
    valid.write_text(json.dumps(sample_cards.v03()), encoding="utf-8")
    return str(valid), card_without_version(tmp_path)


def test_validate_github_annotates_every_file(tmp_path: Path) -> None:
    invalid, other = card_without_version(tmp_path), str(tmp_path / "other.json")
    Path(other).write_text(Path(invalid).read_text(), encoding="utf-8")
    missing = str(tmp_path / "missing.json")
    result = run("card", "validate", "--format", "github", invalid, missing, other)
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert [line.split("::")[1] for line in lines] == [
        f"error file={invalid},title=required-field-missing",
        f"warning file={invalid},title=media-type-invalid",
        f"error file={missing},title=unreadable",
        f"error file={other},title=required-field-missing",
        f"warning file={other},title=media-type-invalid",
    ]


def test_validate_junit_is_one_report_with_a_testsuite_per_file(tmp_path: Path) -> None:
    valid, invalid = two_cards(tmp_path)
    result = run("card", "validate", "--format", "junit", valid, invalid)
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert (root.get("tests"), root.get("failures")) == ("2", "1")
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("failures")) for s in suites] == [(valid, "0"), (invalid, "1")]
    assert [f.get("type") for f in suites[1].findall("testcase/failure")] == ["required-field-missing"]
