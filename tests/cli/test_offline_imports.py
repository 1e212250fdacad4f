"""The offline commands a release pipeline runs load nothing of the server: no Flask, no SQLAlchemy,
no registry module (but the card validator `card validate` is). Each command is a real process run
with `python -X importtime`, which lists every module it imported. How fast they start is
`bench/cli_start.py`'s figure, not a test's.

Also here: the lazy root command still lists every command, and `signing`'s lazily imported
names stay in step with its imports and `__all__`.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import signing
from cli.main import COMMANDS, cli
from tests.support.agentdex_processes import user_env
from tests.support.cards import make_card

ROOT = Path(__file__).resolve().parents[2]
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)
SERVER_MODULES = re.compile(r"^(flask|werkzeug|sqlalchemy|alembic|apscheduler|waitress|granian)(\.|$)")


def imported_modules(*args: str, cwd: Path) -> set[str]:
    """Every module `agentdex ARGS` imports; the command must succeed."""
    process = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from cli.main import cli; cli()", *args],
        cwd=cwd,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 0, process.stderr[-2000:]
    return set(IMPORTED.findall(process.stderr))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("offline")
    (path / "card.json").write_text(json.dumps(make_card("Weather", skills=12), indent=2))
    runner = CliRunner()
    assert runner.invoke(cli, ["keys", "generate", "--alg", "EdDSA", "--out", str(path / "key.pem")]).exit_code == 0
    signed = runner.invoke(cli, ["card", "sign", str(path / "card.json"), "--key", str(path / "key.pem")])
    assert signed.exit_code == 0, signed.output
    (path / "signed.json").write_bytes(signed.stdout_bytes)
    return path


OFFLINE = {
    "card validate": ("card", "validate", "card.json"),
    "card sign": ("card", "sign", "card.json", "--key", "key.pem", "--out", "again.json"),
    "card verify": ("card", "verify", "signed.json", "--key", "key.pem"),
    "card canonicalize": ("card", "canonicalize", "card.json"),
    "keys generate": ("keys", "generate", "--alg", "ES256", "--out", "-"),
    "keys jwks": ("keys", "jwks", "key.pem"),
}


@pytest.mark.parametrize("command", sorted(OFFLINE))
def test_offline_commands_import_nothing_of_the_server(workdir, command):
    modules = imported_modules(*OFFLINE[command], cwd=workdir)
    assert {"cli.main", "signing"} <= modules  # the listing holds the command's own imports
    assert not sorted(filter(SERVER_MODULES.match, modules)), f"`agentdex {command}` loads the server"
    allowed = {"registry", "registry.validation"} if command == "card validate" else set()
    registry = {m for m in modules if m == "registry" or m.startswith("registry.")}
    assert {m for m in registry if not m.startswith("registry.validation.")} <= allowed, sorted(registry)


def test_signing_with_a_key_file_loads_no_http_client_or_jose_library(workdir):
    """What a pipeline's signing step spends most of its start on, when loaded up front."""
    modules = imported_modules(*OFFLINE["card sign"], cwd=workdir)
    assert not {"requests", "joserfc", "xml.etree.ElementTree"} & modules


def test_help_lists_every_command_each_under_its_own_name():
    listed = CliRunner().invoke(cli, ["--help"]).output.split("Commands:", 1)[1]
    assert {line.split()[0] for line in listed.strip().splitlines()} == set(COMMANDS)
    for name in COMMANDS:
        assert cli.commands[name].name == name


def test_groups_load_with_every_subcommand():
    assert {"canonicalize", "sign", "validate", "verify"} <= set(cli.commands["card"].commands)
    assert {"generate", "jwks", "list", "rotate"} <= set(cli.commands["keys"].commands)


def test_importing_signing_loads_none_of_its_modules():
    code = "import signing, sys; print(sorted(m for m in sys.modules if m.startswith('signing.')))"
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert process.stdout.strip() == "[]"


def test_every_signing_export_resolves_to_its_modules_object():
    tree = ast.parse((ROOT / "signing" / "__init__.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert set(imported) == set(signing.__all__) == set(signing._HOMES)
    for name, (module, attribute) in imported.items():
        assert getattr(signing, name) is getattr(sys.modules[module], attribute), name
    with pytest.raises(AttributeError):
        signing.no_such_name  # noqa: B018
