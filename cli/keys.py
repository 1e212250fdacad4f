"""The `agentdex keys` group: signing keys for cards."""

from __future__ import annotations

import click


@click.group()
def keys() -> None:
    """Signing keys: generate keys and JWKS for cards (offline); rotate and list the registry's own keys."""
