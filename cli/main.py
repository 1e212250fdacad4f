"""Root of the `agentdex` command. Subcommands live in their own modules and import lazily."""

from __future__ import annotations

import click

from cli.card import card
from cli.keys import keys


@click.group()
@click.version_option(package_name="agentdex")
def cli() -> None:
    """Agentdex: the registry and discovery service for A2A agents."""


cli.add_command(card)
cli.add_command(keys)
