"""Root of the `agentdex` command. Subcommands live in their own modules and import lazily."""

from __future__ import annotations

import click

import cli.card_signing  # noqa: F401  (attaches `canonicalize`, `sign`, `verify` to the `card` group)
import cli.card_validate  # noqa: F401  (attaches `validate` to the `card` group)
import cli.keys_cmds  # noqa: F401  (attaches `generate`, `jwks` to the `keys` group)
import cli.registry_keys  # noqa: F401  (attaches `rotate`, `list` to the `keys` group)
from cli import catalog, health, relay, worker
from cli.card import card
from cli.keys import keys
from cli.server import db, serve
from cli.tokens import tokens


@click.group()
@click.version_option(package_name="agentdex")
def cli() -> None:
    """Agentdex: the registry and discovery service for A2A agents."""


for command in (serve, db, tokens, catalog.register, catalog.search, catalog.show, catalog.deprecate,
                catalog.delete, catalog.import_, card, keys, worker.worker, health.health, health.check, relay.relay):
    cli.add_command(command)
