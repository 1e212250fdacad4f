"""`--json` means JSON on stdout for failures too: `{"error": {"code", "message"}}` and the exit
code, whatever failed (the command line, the registry, the network, the local database), while
stderr keeps its one line for a person."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agentdex_processes import agentdex, free_port, serve, user_env


@pytest.fixture(scope="module")
def registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("registry")
    process, url = serve(home, user_env(), "--no-jobs")
    with process:
        assert process.wait_until_answering(url), process.output
        yield url


def failure(result: Any, exit_code: int) -> dict[str, Any]:
    """The error envelope of a failed command, after checking what a script relies on."""
    assert result.returncode == exit_code, (result.stdout, result.stderr)
    assert result.stderr.strip(), "a person still gets the message on stderr"
    document = json.loads(result.stdout)  # the whole of stdout is one JSON document
    assert set(document) == {"error"} and {"code", "message"} <= set(document["error"])
    return document["error"]


def test_a_usage_error_of_the_command_line(tmp_path: Path) -> None:
    error = failure(agentdex("search", "--limit", "0", "--json", cwd=tmp_path), 2)
    assert error["code"] == "usage" and "--limit" in error["message"]


def test_a_usage_error_the_command_finds(tmp_path: Path, registry_url: str) -> None:
    result = agentdex(
        "search", "--verified", "--signature", "invalid", "--json", "--registry", registry_url, cwd=tmp_path
    )
    error = failure(result, 2)
    assert error == {"code": "usage", "message": "--verified and --signature contradict each other"}


def test_an_unknown_command_asked_for_json(tmp_path: Path) -> None:
    error = failure(agentdex("serach", "--json", cwd=tmp_path), 2)
    assert error["code"] == "usage" and "serach" in error["message"]


def test_a_refusal_of_the_registry_keeps_its_code(tmp_path: Path, registry_url: str) -> None:
    missing = "0b0c1d2e-0000-4000-8000-000000000000"
    error = failure(agentdex("show", missing, "--json", "--registry", registry_url, cwd=tmp_path), 1)
    assert error["code"] == "not_found" and error["details"]["status"] == 404


def test_a_refused_token(tmp_path: Path, registry_url: str) -> None:
    env = user_env(AGENTDEX_URL=registry_url, AGENTDEX_TOKEN="adx_not-a-token")
    error = failure(agentdex("register", "https://agent.example.com", "--json", cwd=tmp_path, env=env), 1)
    assert error["code"] == "unauthorized" and registry_url in error["message"]


def test_a_registry_that_refuses_connections(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    for command in (["search", "--tag", "weather"], ["show", "0b0c1d2e"], ["relay", "list"]):
        error = failure(agentdex(*command, "--json", "--registry", closed, cwd=tmp_path), 4)
        assert error["code"] == "unreachable" and f"cannot reach the registry at {closed}" in error["message"]


def test_an_admin_command_without_its_database(tmp_path: Path) -> None:
    for command in (["keys", "list"], ["keys", "rotate"], ["tokens", "create", "bot", "--scope", "admin"]):
        error = failure(agentdex(*command, "--json", cwd=tmp_path), 2)
        assert error["code"] == "database_not_found"


def test_an_offline_command_that_cannot_read_its_input(tmp_path: Path) -> None:
    error = failure(agentdex("card", "verify", "missing.json", "--key", "missing.pem", "--json", cwd=tmp_path), 2)
    assert error["code"] == "usage" and "missing" in error["message"]


@pytest.mark.parametrize("asked", [["--format", "json"], ["--format=json"]])
def test_format_json_is_asked_for_json_too(tmp_path: Path, asked: list[str]) -> None:
    error = failure(agentdex("card", "validate", "missing.json", *asked, cwd=tmp_path), 2)
    assert error["code"] == "usage" and "missing.json" in error["message"]
    error = failure(agentdex("card", "validate", *asked, cwd=tmp_path), 2)  # click's own usage error
    assert error["code"] == "usage"


def test_without_json_a_failure_is_one_line_on_stderr_only(tmp_path: Path) -> None:
    result = agentdex("search", "--registry", f"http://127.0.0.1:{free_port()}", cwd=tmp_path)
    assert result.returncode == 4 and result.stdout == ""
    assert result.stderr.startswith("error: cannot reach the registry at")
