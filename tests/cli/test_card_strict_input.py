"""`agentdex card verify | validate | sign` refuse a file that readers could take two ways: a
member name repeated in one object, an unpaired surrogate, nesting over 64 levels. Exit 2 (a bad
input file, as for a file that is not JSON), with the member and its path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from tests.signing.cards import rich_card


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def signed(tmp_path: Path) -> Path:
    (tmp_path / "card.json").write_text(json.dumps(rich_card()), encoding="utf-8")
    key, public = str(tmp_path / "key.pem"), str(tmp_path / "key.pub.json")
    assert run("keys", "generate", "--alg", "EdDSA", "--out", key, "--public-jwk", public).exit_code == 0
    out = tmp_path / "signed.json"
    result = run("card", "sign", str(tmp_path / "card.json"), "--key", key, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert run("card", "verify", str(out), "--key", public).exit_code == 0
    return out


def test_verify_refuses_a_signed_card_with_a_second_name_before_the_real_one(signed: Path) -> None:
    text = signed.read_text(encoding="utf-8")
    signed.write_text('{"name": "Totally Legit Bank", ' + text.lstrip()[1:], encoding="utf-8")
    result = run("card", "verify", str(signed), "--key", str(signed.parent / "key.pub.json"))
    assert result.exit_code == 2, result.output
    assert 'the member name "name" appears more than once at $.name' in result.output
    assert "verified" not in result.output


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            '{"name": "a", "skills": [{"id": "s", "id": "t"}]}',
            'member name "id" appears more than once at $.skills[0].id',
        ),
        ('{"name": "\\ud800"}', "the string at $.name holds an unpaired UTF-16 surrogate"),
        ('{"skills": ' + "[" * 70 + "]" * 70 + "}", "more than 64 levels deep"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "sign", "canonicalize"])
def test_card_commands_refuse_ambiguous_files_as_bad_input(
    tmp_path: Path, text: str, needle: str, command: str
) -> None:
    card = tmp_path / "card.json"
    card.write_text(text, encoding="utf-8")
    key = str(tmp_path / "key.pem")
    assert run("keys", "generate", "--alg", "EdDSA", "--out", key).exit_code == 0
    args = ["card", command, str(card)] + (["--key", key] if command == "sign" else [])
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.output and str(card) in result.output
