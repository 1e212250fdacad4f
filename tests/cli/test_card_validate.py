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
