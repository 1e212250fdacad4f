"""The catalog commands end to end: a real registry served on loopback, real agents on loopback,
the `agentdex` command driving both."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli.main import cli
from tests.support.cards import make_card


def run(*args: str, token: str | None = None, url: str) -> object:
    env = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {})}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_register_search_show_deprecate_delete(registry_url, writer_token, card_server):
    card_server.serve_json("/.well-known/agent-card.json", make_card("Weather Agent", tags=["weather", "forecast"]))
    result = run("register", card_server.base_url, "--json", token=writer_token, url=registry_url)
    assert result.exit_code == 0, result.output
    agent_id = json.loads(result.output)["id"]

    found = run("search", "--tag", "WEATHER", "--tag", "forecast", "--json", url=registry_url)
    assert [a["id"] for a in json.loads(found.output)["items"]] == [agent_id]
    human = run("search", "--tag", "weather", url=registry_url)
    assert "Weather Agent" in human.output and "1 agent(s)" in human.output

    shown = run("show", agent_id, url=registry_url)
    assert shown.exit_code == 0 and "forecast" in shown.output

    assert run("deprecate", agent_id, "--message", "retired", token=writer_token, url=registry_url).exit_code == 0
    assert json.loads(run("search", "--tag", "weather", "--json", url=registry_url).output)["items"] == []
    assert run("delete", agent_id, "--yes", token=writer_token, url=registry_url).exit_code == 0
    missing = run("show", agent_id, url=registry_url)
    assert missing.exit_code == 1 and "not_found" in missing.output


def test_register_failures_exit_non_zero_with_the_reason(registry_url, writer_token, card_server):
    card_server.serve_json("/.well-known/agent-card.json", {"name": "half a card"})
    invalid = run("register", card_server.base_url, token=writer_token, url=registry_url)
    assert invalid.exit_code == 1
    assert "invalid_card" in invalid.output and "error:" in invalid.output
    no_token = run("register", card_server.base_url, url=registry_url)
    assert no_token.exit_code == 1 and "401" in no_token.output
    unreachable = run("search", url="http://127.0.0.1:9")
    assert unreachable.exit_code == 4


@pytest.mark.parametrize("parallel", ["1", "3"])
def test_import_jsonl_with_progress_and_per_line_failures(registry_url, writer_token, tmp_path, parallel):
    lines = [
        json.dumps({"card": make_card(f"Agent {i}", tags=["bulk"]), "cardUrl": f"https://a{i}.example/c.json"})
        for i in range(7)
    ]
    lines.insert(3, json.dumps({"card": {"name": "bad"}, "cardUrl": "https://bad.example/c.json"}))
    lines.insert(7, json.dumps({"card": {"name": "bad too"}, "cardUrl": "https://bad2.example/c.json"}))
    path = tmp_path / "cards.jsonl"
    path.write_text("\n".join(lines) + "\n\n")
    result = run("import", str(path), "--batch", "2", "--parallel", parallel, token=writer_token, url=registry_url)
    assert result.exit_code == 1  # two cards failed
    assert "created 7, failed 2" in result.output
    assert "line 4:" in result.output and "line 8:" in result.output  # failures keep their line numbers
    page = json.loads(run("search", "--tag", "bulk", "--limit", "50", "--json", url=registry_url).output)
    assert len(page["items"]) == 7


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_import_of_an_unreadable_file_says_so_before_reaching_for_the_registry(tmp_path, output):
    result = run(
        "import", str(tmp_path / "missing.jsonl"), *output, token="adx_x", url="http://127.0.0.1:9"
    )  # nothing listens
    assert result.exit_code == 2, result.output
    assert "cannot read" in result.output and "missing.jsonl" in result.output


def test_tokens_create_prints_the_token_once(database_url, tmp_path):
    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "x" * 32}
    result = CliRunner().invoke(cli, ["tokens", "create", "ci", "--scope", "agents:write", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["token"].startswith("adx_")
    bad = CliRunner().invoke(cli, ["tokens", "create", "ci2", "--scope", "everything"], env=env)
    assert bad.exit_code == 2 and "unknown" in bad.output
