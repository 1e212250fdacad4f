"""The `agentdex keys` group: signing keys for cards."""

from __future__ import annotations

import click


@click.group()
def keys() -> None:
    """Generate signing keys and export public JWKS."""
