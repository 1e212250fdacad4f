"""Root of the `agentdex` command. Subcommands live in their own modules and import lazily."""

from __future__ import annotations

import click

# card_signing, card_validate, keys_cmds and registry_keys are imported for what they attach:
# `canonicalize`, `sign`, `verify` and `validate` to the `card` group; `generate`, `jwks`,
# `rotate` and `list` to the `keys` group. (A plain `import cli.x` would bind the name `cli`,
# which the root command below takes.)
from cli import (  # noqa: F401
    agent_versions,
    card_signing,
    card_validate,
    catalog,
    health,
    keys_cmds,
    registry_keys,
    relay,
    worker,
)
from cli.card import card
from cli.exits import ReportingGroup
from cli.keys import keys
from cli.server import db, serve
from cli.tokens import tokens


@click.group(cls=ReportingGroup)  # with --json, click's own usage errors are JSON too
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


for command in (
    serve,
    db,
    tokens,
    catalog.register,
    catalog.search,
    catalog.show,
    catalog.deprecate,
    catalog.undeprecate,
    catalog.delete,
    catalog.import_,
    catalog.tags,
    agent_versions.refresh,
    agent_versions.versions,
    card,
    keys,
    worker.worker,
    health.health,
    health.check,
    relay.relay,
):
    cli.add_command(command)
