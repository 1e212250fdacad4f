"""`--help` is for users: every command of `agentdex`, subcommands included, explains itself
without the code's internals (exception classes, "Raises …", "Returns …", module paths)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from cli.main import cli

INTERNAL = re.compile(
    r"\bCliError\b|\bExitCode\b|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bRaises\b|\bReturns\b"
    r"|\(exit \d\)|`?\b(?:cli|registry|signing)\.[a-z_]+"
)


def _commands(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[str, click.Command]]:
    yield " ".join(path), command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands(cli, ("agentdex",)))


def test_the_walk_reaches_nested_subcommands():
    assert {"agentdex tokens revoke", "agentdex relay delete", "agentdex card sign", "agentdex versions"} <= set(
        COMMANDS
    )


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_speaks_to_users(path):
    command = COMMANDS[path]
    text = command.get_help(click.Context(command, info_name=path))
    assert command.help and command.help.strip(), f"`{path} --help` says nothing about what it does"
    assert not INTERNAL.findall(text), f"`{path} --help` shows internals:\n{text}"
