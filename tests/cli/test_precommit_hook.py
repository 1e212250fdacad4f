"""The pre-commit hook (.pre-commit-hooks.yaml) as pre-commit itself runs it: `pre-commit try-repo`
installs Agentdex from a repository into a virtualenv of its own and runs `agentdex-validate-cards`
on a project's cards.

try-repo installs what is committed (plus changes to tracked files, never new files), so the
repository it is given is a snapshot of this working tree committed in a temporary directory:
the test judges the files as they are now, committed or not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cards import make_card

ROOT = Path(__file__).resolve().parents[2]
# What `pip install` of the repository needs, and the hook's manifest.
SNAPSHOT = ("setup.py", "setup.cfg", "README.md", ".pre-commit-hooks.yaml", "registry", "signing", "cli", "migrations")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
HOOK = "agentdex-validate-cards"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_IDENTITY}, check=True, capture_output=True)


def committed_repository(path: Path) -> Path:
    git("init", "--quiet", cwd=path)
    git("add", "--all", cwd=path)
    git("commit", "--quiet", "--message", "snapshot", cwd=path)
    return path


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    snapshot = tmp_path_factory.mktemp("agentdex")
    for name in SNAPSHOT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, snapshot / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, snapshot / name)
    return committed_repository(snapshot)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")  # the hook's virtualenv, built once per module


def try_repo(project: Path, hook_repository: Path, pre_commit_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), HOOK, "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def project(path: Path, files: dict[str, object]) -> Path:
    """A project repository holding `files` (path: JSON document), added to git."""
    path.mkdir()
    for name, document in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(json.dumps(document, indent=2))
    git("init", "--quiet", cwd=path)
    git("add", "--all", cwd=path)
    return path


def invalid_card() -> dict[str, object]:
    card = make_card("Broken")
    del card["name"]
    return card


def test_valid_cards_pass_and_other_json_is_not_taken_for_a_card(tmp_path, hook_repository, pre_commit_home):
    files = {
        ".well-known/agent-card.json": make_card("Weather"),
        "package.json": {"name": "not-a-card"},  # would fail validation if the hook took it
        "agent.json": {"model": "not-a-card"},  # `agent.json` is a card only under .well-known/
    }
    result = try_repo(project(tmp_path / "valid", files), hook_repository, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def test_an_invalid_card_fails_the_hook_naming_the_file(tmp_path, hook_repository, pre_commit_home):
    files = {"agents/broken.agent-card.json": invalid_card(), "package.json": {"name": "not-a-card"}}
    result = try_repo(project(tmp_path / "invalid", files), hook_repository, pre_commit_home)
    assert result.returncode != 0
    assert "Failed" in result.stdout
    assert "agents/broken.agent-card.json: INVALID" in result.stdout


def test_one_call_with_a_valid_and_an_invalid_card_fails_naming_only_the_invalid_one(
    tmp_path, hook_repository, pre_commit_home
):
    files = {".well-known/agent-card.json": make_card("Weather"), "agents/broken.agent-card.json": invalid_card()}
    result = try_repo(project(tmp_path / "mixed", files), hook_repository, pre_commit_home)
    assert result.returncode != 0
    assert "Failed" in result.stdout
    assert "agents/broken.agent-card.json: INVALID" in result.stdout
    assert ".well-known/agent-card.json: valid" in result.stdout
    assert "INVALID" not in result.stdout.replace("agents/broken.agent-card.json: INVALID", "")
