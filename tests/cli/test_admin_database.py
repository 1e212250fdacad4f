"""The admin commands work on the registry's own database and never make a new one: run from
another directory they say which database they looked for and how to name the right one. And a
refused token names the registry that refused it and where the token came from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agentdex_processes import agentdex, serve, user_env


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A running `agentdex serve` and the directory of its database."""
    home = tmp_path_factory.mktemp("registry")
    process, url = serve(home, user_env(), "--no-jobs")
    with process:
        assert process.wait_until_answering(url), process.output
        yield home, url


@pytest.mark.parametrize(
    "command",
    [
        ["tokens", "create", "ci-bot", "--scope", "agents:write"],
        ["keys", "list"],
        ["keys", "rotate"],
    ],
    ids=" ".join,
)
def test_an_admin_command_in_the_wrong_directory_creates_nothing_and_says_where_it_looked(
    tmp_path: Path, command: list[str]
) -> None:
    result = agentdex(*command, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    message = result.stderr
    assert f"no database at {tmp_path.resolve() / 'agentdex.db'}" in message
    assert "AGENTDEX_DATABASE_URL is not set" in message
    assert "--database URL or AGENTDEX_DATABASE_URL" in message
    assert "Traceback" not in message and len(message.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no database, no secret beside it


def test_a_database_named_in_the_environment_that_does_not_exist_is_named_too(tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "registry.db"
    result = agentdex("keys", "list", cwd=tmp_path, env=user_env(AGENTDEX_DATABASE_URL=f"sqlite:///{missing}"))
    assert result.returncode == 2
    assert f"no database at {missing} (from AGENTDEX_DATABASE_URL)" in result.stderr
    assert not missing.parent.exists()


def test_a_file_without_the_registry_tables_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "agentdex.db").touch()  # e.g. made by another program, or by hand
    result = agentdex("keys", "list", cwd=tmp_path)
    assert result.returncode == 2
    assert f"the database at {tmp_path.resolve() / 'agentdex.db'} has no tables" in result.stderr
    assert "`agentdex db upgrade`" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agentdex.db"]  # no schema, no secret


@pytest.mark.parametrize(
    ("database", "says"),
    [
        ("sqlite:///notes.txt", "is not a database"),  # a file that is something else
        ("sqlite:///" + "x" * 300, "no database at"),  # a name too long for any file
        ("sqlite:///a%00b", "no database at"),  # a NUL in the name
        ("mysql://u@db.example/registry", "needs the database driver"),  # no driver installed
    ],
)
def test_a_database_that_cannot_be_opened_is_one_line_and_json(tmp_path: Path, database: str, says: str) -> None:
    (tmp_path / "notes.txt").write_text("not a database\n")
    result = agentdex("tokens", "list", "--database", database, "--json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert says in json.loads(result.stdout)["error"]["message"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]


def test_the_admin_commands_find_the_registry_database_from_anywhere_when_told(
    registry: tuple[Path, str], tmp_path: Path
) -> None:
    home, url = registry
    database = f"sqlite:///{home / 'agentdex.db'}"
    rotated = agentdex("keys", "rotate", "--json", "--database", database, cwd=tmp_path)
    assert rotated.returncode == 0, rotated.stderr
    listed = agentdex("keys", "list", "--json", "--database", database, cwd=tmp_path)
    assert [key["kid"] for key in json.loads(listed.stdout)["items"]] == [json.loads(rotated.stdout)["kid"]]
    created = agentdex(
        "tokens", "create", "ci-bot", "--scope", "agents:write", "--json",
        cwd=tmp_path, env=user_env(AGENTDEX_DATABASE_URL=database),
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)["token"]
    registered = agentdex(
        "register", "http://127.0.0.1:9/", cwd=tmp_path, env=user_env(AGENTDEX_URL=url, AGENTDEX_TOKEN=token)
    )
    assert registered.returncode == 1 and "(HTTP 401" not in registered.stderr  # the token works; the URL does not
    assert list(tmp_path.iterdir()) == []


def test_a_refused_token_names_the_registry_and_where_the_token_came_from(
    registry: tuple[Path, str], tmp_path: Path
) -> None:
    _home, url = registry
    assert agentdex("db", "upgrade", cwd=tmp_path).returncode == 0  # another registry's database
    other = agentdex("tokens", "create", "ci-bot", "--scope", "agents:write", "--json", cwd=tmp_path)
    token = json.loads(other.stdout)["token"]

    from_env = agentdex(
        "register", "http://127.0.0.1:9/", cwd=tmp_path, env=user_env(AGENTDEX_URL=url, AGENTDEX_TOKEN=token)
    )
    assert from_env.returncode == 1
    assert f"error: the registry at {url} refused the token from AGENTDEX_TOKEN:" in from_env.stderr
    assert "(HTTP 401, unauthorized)" in from_env.stderr
    assert "A token works only on the registry whose database made it" in from_env.stderr

    flag = agentdex("register", "http://127.0.0.1:9/", "--registry", url, "--token", token, cwd=tmp_path)
    assert f"the registry at {url} refused the token from --token:" in flag.stderr

    none = agentdex("register", "http://127.0.0.1:9/", "--registry", url, cwd=tmp_path)
    assert f"error: the registry at {url} needs a token:" in none.stderr
    assert "Pass --token or set AGENTDEX_TOKEN" in none.stderr


def test_serve_creates_its_database_where_it_is_told(tmp_path: Path) -> None:
    database = tmp_path / "data" / "registry.db"
    database.parent.mkdir()
    process, url = serve(tmp_path, user_env(), "--no-jobs", "--database", f"sqlite:///{database}")
    with process:
        assert process.wait_until_answering(url), process.output
    assert database.exists() and (tmp_path / "data" / "registry.db.secret").exists()
    assert not (tmp_path / "agentdex.db").exists()
