"""Root of the `agentdex` command. Subcommands live in their own modules and import lazily."""

from __future__ import annotations

import click

# card_signing, card_validate, keys_cmds and registry_keys are imported for what they attach:
# `canonicalize`, `sign`, `verify` and `validate` to the `card` group; `generate`, `jwks`,
# `rotate` and `list` to the `keys` group. (A plain `import cli.x` would bind the name `cli`,
# which the root command below takes.)
from cli import card_signing, card_validate, catalog, health, keys_cmds, registry_keys, relay, worker  # noqa: F401
from cli.card import card
from cli.keys import keys
from cli.server import db, serve
from cli.tokens import tokens


@click.group()
@click.version_option(package_name="agentdex")
def cli() -> None:
    """Agentdex: the registry and discovery service for A2A agents."""


for command in (
    serve,
    db,
    tokens,
    catalog.register,
    catalog.search,
    catalog.show,
    catalog.deprecate,
    catalog.delete,
    catalog.import_,
    card,
    keys,
    worker.worker,
    health.health,
    health.check,
    relay.relay,
):
    cli.add_command(command)
