"""What a clone and `pip install .` hold: setup.py declares only package data that exists and
dependencies that the code uses, and the files Agentdex writes beside its database stay out of
`git status`."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support.agentdex_processes import agentdex, serve, user_env

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("registry", "signing", "cli", "migrations")
# Installed to be run, not imported: the WSGI server the README scales out with.
PROGRAMS = {"granian"}


def setup_arguments() -> dict[str, Any]:
    """The literal keyword arguments of the setup() call in setup.py."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup")
    arguments = {}
    for keyword in call.keywords:
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            continue  # computed values (the README as long_description, find_packages())
    return arguments


def imported_top_level_names() -> set[str]:
    names: set[str] = set()
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def test_every_package_data_pattern_names_files_that_exist() -> None:
    for package, patterns in setup_arguments()["package_data"].items():
        directory = ROOT.joinpath(*package.split("."))
        for pattern in patterns:
            assert list(directory.glob(pattern)), f"{package}: {pattern} matches no file"


def test_every_dependency_is_used() -> None:
    imported = imported_top_level_names()
    providers = importlib.metadata.packages_distributions()  # import name -> distributions
    used = {_normal(dist) for name in imported for dist in providers.get(name, [])}
    for requirement in setup_arguments()["install_requires"]:
        name = _normal(re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0])
        assert name in used or name in PROGRAMS, f"{requirement} is installed but nothing imports it"


def test_what_agentdex_writes_beside_its_database_stays_out_of_git_status(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    subprocess.run(["git", "init", "--quiet"], cwd=tmp_path, check=True)
    process, url = serve(tmp_path, user_env())
    with process:
        assert process.wait_until_answering(url), process.output
        assert agentdex("tokens", "create", "bot", "--scope", "admin", cwd=tmp_path).returncode == 0
        assert agentdex("keys", "rotate", cwd=tmp_path).returncode == 0
        written = {p.name for p in tmp_path.iterdir()} - {".git", ".gitignore", "serve.log"}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, capture_output=True, text=True
        ).stdout.splitlines()
    assert {"agentdex.db", "agentdex.db-wal", "agentdex.db-writer.lock", "agentdex.db.secret"} <= written
    assert sorted(status) == ["?? .gitignore", "?? serve.log"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
