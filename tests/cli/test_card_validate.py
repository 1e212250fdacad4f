"""`agentdex card validate`: offline validation of card files, with exit codes for pipelines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from tests.registry.validation import sample_cards


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write(tmp_path: Path, content: str, name: str = "card.json") -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def test_a_valid_card_exits_0_and_names_its_version(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["card", "validate", write(tmp_path, json.dumps(sample_cards.v03()))])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "A2A 0.3.0" in result.output


def test_an_invalid_card_exits_1_and_lists_each_issue(runner: CliRunner, tmp_path: Path) -> None:
    card = sample_cards.v10()
    del card["version"]
    card["defaultInputModes"] = ["text"]
    result = runner.invoke(cli, ["card", "validate", write(tmp_path, json.dumps(card))])
    assert result.exit_code == 1
    assert "INVALID" in result.output and "A2A 1.0" in result.output
    assert "error    /version  [required-field-missing]" in result.output
    assert "warning  /defaultInputModes/0  [media-type-invalid]" in result.output


def test_json_output_is_the_report(runner: CliRunner, tmp_path: Path) -> None:
    card = sample_cards.hybrid()
    card["skills"] = []
    result = runner.invoke(cli, ["card", "validate", "--json", write(tmp_path, json.dumps(card))])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert (report["valid"], report["protocolVersion"], report["flavor"]) == (False, "1.0", "1.0+0.3")
    assert {"path": "/skills", "rule": "required-field-empty", "severity": "error"}.items() <= report["issues"][
        0
    ].items()


def test_standard_input(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["card", "validate", "--json", "-"], input=json.dumps(sample_cards.v02()))
    assert result.exit_code == 0
    assert json.loads(result.output)["flavor"] == "0.2"


def test_json_that_is_not_an_object_is_an_invalid_card(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["card", "validate", write(tmp_path, "[1, 2]")])
    assert result.exit_code == 1
    assert "card-not-object" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"name": "x",}', "is not JSON: Expecting property name enclosed in double quotes at line 1"),
        ("", "is not JSON"),
    ],
)
def test_input_that_is_not_json_is_a_usage_error(runner: CliRunner, tmp_path: Path, content: str, message: str) -> None:
    result = runner.invoke(cli, ["card", "validate", write(tmp_path, content)])
    assert result.exit_code == 2
    assert message in result.output


def test_binary_input_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "card.bin"
    path.write_bytes(b"\xff\xfe\x00{")
    result = runner.invoke(cli, ["card", "validate", str(path)])
    assert result.exit_code == 2
    assert "is not JSON" in result.output


def test_a_missing_file_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["card", "validate", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_a_directory_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["card", "validate", str(tmp_path)])
    assert result.exit_code == 2
    assert "cannot read" in result.output


def test_a_url_is_discovered_and_validated(runner: CliRunner, card_server) -> None:  # type: ignore[no-untyped-def]
    card_server.serve_json("/.well-known/agent.json", sample_cards.v03())
    result = runner.invoke(cli, ["card", "validate", card_server.base_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["protocolVersion"] == "0.3.0"
    bad = card_server.serve_json("/bad.json", {"name": "half a card"})
    assert runner.invoke(cli, ["card", "validate", bad]).exit_code == 1


def test_a_url_that_cannot_be_fetched_exits_4(runner: CliRunner, card_server) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(cli, ["card", "validate", card_server.url("/missing.json")])
    assert result.exit_code == 4
    assert "cannot fetch a card" in result.output


def test_no_argument_is_a_usage_error(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["card", "validate"]).exit_code == 2


def invalid_v10() -> str:
    card = sample_cards.v10()
    del card["version"]
    return json.dumps(card)


def test_several_files_are_each_judged_and_one_invalid_card_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    valid = write(tmp_path, json.dumps(sample_cards.v03()), "valid.json")
    invalid = write(tmp_path, invalid_v10(), "invalid.json")
    result = runner.invoke(cli, ["card", "validate", valid, invalid])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith(f"{valid}: valid — A2A 0.3.0")
    assert f"{invalid}: INVALID — A2A 1.0" in result.stdout
    assert "error    /version  [required-field-missing]" in result.stdout


def test_an_unreadable_file_among_several_exits_2_and_the_others_are_still_judged(
    runner: CliRunner, tmp_path: Path
) -> None:
    first = write(tmp_path, json.dumps(sample_cards.v03()), "first.json")
    broken = write(tmp_path, "{not json", "broken.json")
    last = write(tmp_path, invalid_v10(), "last.json")
    result = runner.invoke(cli, ["card", "validate", first, str(tmp_path / "missing.json"), broken, last])
    assert result.exit_code == 2  # before 1: the invalid card does not hide the file that was not checked
    assert f"{first}: valid" in result.stdout and f"{last}: INVALID" in result.stdout
    assert "no such file" in result.stderr and f"{broken} is not JSON" in result.stderr


def test_several_sources_as_json_are_a_list_of_reports_and_errors(runner: CliRunner, tmp_path: Path) -> None:
    valid = write(tmp_path, json.dumps(sample_cards.v02()))
    missing = str(tmp_path / "missing.json")
    result = runner.invoke(cli, ["card", "validate", "--json", valid, missing])
    assert result.exit_code == 2
    judged = json.loads(result.stdout)
    assert [entry["source"] for entry in judged] == [valid, missing]
    assert (judged[0]["report"]["valid"], judged[0]["report"]["flavor"]) == (True, "0.2")
    assert judged[1]["error"]["code"] == "usage" and "no such file" in judged[1]["error"]["message"]


def test_an_unreachable_url_among_invalid_cards_exits_4(  # type: ignore[no-untyped-def]
    runner: CliRunner, tmp_path: Path, card_server
) -> None:
    invalid = write(tmp_path, invalid_v10())
    result = runner.invoke(cli, ["card", "validate", invalid, card_server.url("/missing.json")])
    assert result.exit_code == 4
    assert f"{invalid}: INVALID" in result.stdout and "cannot fetch a card" in result.stderr
