"""`agentdex import` reports each refused line (its number and why) and imports the others: a line
that is not JSON the registry accepts is not sent, a card the registry refuses shows its first
issue, and the command exits 1 when any line was refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from cli.main import cli
from tests.support.cards import make_card


def run(*args: str, token: str, url: str) -> Result:
    env = {"AGENTDEX_URL": url, "AGENTDEX_TOKEN": token}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def line(name: str, **card: Any) -> str:
    return json.dumps(
        {"card": {**make_card(name, tags=["lines"]), **card}, "cardUrl": f"https://{name}.example/c.json"}
    )


def write_lines(tmp_path: Path) -> Path:
    lines = [
        line("good1"),
        json.dumps({"card": {"name": "half a card"}, "cardUrl": "https://half.example/c.json"}),  # invalid card
        '{"card": {"name": ',  # not JSON
        '{"card": {"name": "Impostor", ' + line("dup")[len('{"card": {') :],  # a second "name" first
        line("surrogate").replace('"surrogate skill 0"', '"\\ud800"'),
        '{"card": ' + "[" * 70 + "]" * 70 + "}",  # too deep
        line("nul").replace('"nul skill 0"', '"a\\u0000b"'),  # a NUL character, which no batch may hold
        line("good2"),
    ]
    path = tmp_path / "cards.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_each_refused_line_is_reported_and_the_rest_imported(
    registry_url: str, writer_token: str, tmp_path: Path
) -> None:
    result = run("import", str(write_lines(tmp_path)), "--batch", "2", token=writer_token, url=registry_url)
    assert result.exit_code == 1, result.output
    assert "created 2, failed 6" in result.output
    reported = {text.split(":", 1)[0]: text for text in result.output.splitlines() if text.startswith("line ")}
    assert set(reported) == {"line 2", "line 3", "line 4", "line 5", "line 6", "line 7"}
    assert (
        "the Agent Card has" in reported["line 2"] and "— the card: cannot tell which A2A version" in reported["line 2"]
    )
    assert "not JSON" in reported["line 3"]
    assert 'the member name "name" appears more than once at $.card.name' in reported["line 4"]
    assert "$.card.skills[0].name" in reported["line 5"] and "surrogate" in reported["line 5"]
    assert "more than 62 levels deep" in reported["line 6"]
    assert "$.card.skills[0].name" in reported["line 7"] and "NUL character" in reported["line 7"]
    found = json.loads(run("search", "--tag", "lines", "--json", token=writer_token, url=registry_url).output)
    assert sorted(agent["name"] for agent in found["items"]) == ["good1", "good2"]


def test_json_output_lists_every_refused_line(registry_url: str, writer_token: str, tmp_path: Path) -> None:
    result = run("import", str(write_lines(tmp_path)), "--json", token=writer_token, url=registry_url)
    assert result.exit_code == 1
    summary, _ = json.JSONDecoder().raw_decode(result.stdout)  # then the error, as JSON too
    assert (summary["created"], summary["failed"]) == (2, 6)
    assert [failure["line"] for failure in summary["errors"]] == [2, 3, 4, 5, 6, 7]
    assert summary["errors"][2]["error"]["details"] == {"path": "$.card.name"}


def test_a_card_refused_by_the_registry_shows_its_first_error_with_the_path(
    registry_url: str, writer_token: str, tmp_path: Path
) -> None:
    card = make_card("No Skills Named")
    del card["skills"][0]["name"]
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"card": card, "cardUrl": "https://one.example/c.json"}) + "\n", encoding="utf-8")
    result = run("import", str(path), token=writer_token, url=registry_url)
    assert result.exit_code == 1
    assert "line 1: the Agent Card has 1 error(s)" in result.output and "skills" in result.output


def test_a_file_of_refused_lines_only_sends_no_card_and_exits_1(
    registry_url: str, writer_token: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n[1, 2\n", encoding="utf-8")
    result = run("import", str(path), token=writer_token, url=registry_url)
    assert result.exit_code == 1, result.output
    assert "created 0, failed 2" in result.output and "line 1: not sent" in result.output
