"""The `agentdex card` group: offline work on Agent Card files (validate, canonicalize, sign, verify)."""

from __future__ import annotations

import click


@click.group()
def card() -> None:
    """Work with Agent Card files offline: validate, canonicalize, sign, verify."""
