"""Root of the `agentdex` command. Each subcommand's module is imported only when that command runs
(or `--help` lists it): `agentdex card sign` in a release pipeline does not load the server, the
HTTP client of the registry commands or the modules of twenty commands it does not run.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import NamedTuple

import click

from cli.exits import ReportingGroup


class LazyCommand(NamedTuple):
    """Where a command lives ("module:attribute"), and, for a group, the modules that attach its
    subcommands to it when imported (`cli.card_signing` adds `sign` and `verify` to `card`)."""

    target: str
    attaching: tuple[str, ...] = ()

    def load(self) -> click.Command:
        for module in self.attaching:
            importlib.import_module(module)
        module_name, attribute = self.target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


COMMANDS = {
    "serve": LazyCommand("cli.server:serve"),
    "db": LazyCommand("cli.server:db"),
    "tokens": LazyCommand("cli.tokens:tokens"),
    "domains": LazyCommand("cli.domains:domains"),
    "register": LazyCommand("cli.catalog:register"),
    "search": LazyCommand("cli.catalog:search", ("cli.search_index",)),
    "show": LazyCommand("cli.catalog:show"),
    "deprecate": LazyCommand("cli.catalog:deprecate"),
    "undeprecate": LazyCommand("cli.catalog:undeprecate"),
    "delete": LazyCommand("cli.catalog:delete"),
    "import": LazyCommand("cli.catalog:import_"),
    "tags": LazyCommand("cli.catalog:tags"),
    "refresh": LazyCommand("cli.agent_versions:refresh"),
    "versions": LazyCommand("cli.agent_versions:versions"),
    "card": LazyCommand("cli.card:card", ("cli.card_signing", "cli.card_validate", "cli.card_publish")),
    "keys": LazyCommand("cli.keys:keys", ("cli.keys_cmds", "cli.registry_keys")),
    "worker": LazyCommand("cli.worker:worker"),
    "health": LazyCommand("cli.health:health"),
    "check": LazyCommand("cli.health:check"),
    "relay": LazyCommand("cli.relay:relay"),
    "audit": LazyCommand("cli.audit:audit"),
    "events": LazyCommand("cli.events:events"),
    "ard": LazyCommand("cli.ard:ard"),
    "agents": LazyCommand("cli.agent_ownership:agents"),
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's `commands` mapping that imports a command on first lookup.

    click's docs make a lazy group by overriding `get_command` and `list_commands`; replacing the
    mapping instead keeps `group.commands` whole for everything that reads it (shell completion,
    tests walking the command tree), and listing names (`NoSuchCommand`'s suggestions) loads nothing.
    """

    def __init__(self, lazy: dict[str, LazyCommand]) -> None:
        self._lazy = dict(lazy)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            self._loaded[name] = self._lazy[name].load()  # KeyError for an unknown name, as a dict
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._lazy and name not in self._loaded:
            raise KeyError(name)
        self._lazy.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._lazy), **dict.fromkeys(self._loaded)})

    def __len__(self) -> int:
        return len(self._lazy.keys() | self._loaded.keys())

    def __contains__(self, name: object) -> bool:  # without loading the command
        return name in self._lazy or name in self._loaded


# with --json, click's own usage errors are JSON too (ReportingGroup)
@click.group(cls=ReportingGroup, commands=LazyCommands(COMMANDS))
@click.version_option(package_name="agentdex")
def cli() -> None:
    """Agentdex: the registry and discovery service for A2A agents.

    Commands that talk to a registry use --registry (env AGENTDEX_URL) and, to change
    anything, --token (env AGENTDEX_TOKEN). An agent ID may be shortened to its first 8
    characters or more. Every command prints JSON with --json.

    \b
    Examples:
      agentdex serve
      agentdex register https://weather.example.com
      agentdex search --tag weather
      agentdex show 5b0c1d2e
    """
