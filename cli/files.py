"""Reading the files the offline commands work on: a path or `-` for standard input, as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cli.exits import CliError, ExitCode

STDIO = "-"


def read_bytes(source: str, what: str | None = None) -> bytes:
    """Bytes of a file or standard input (`-`). Raises CliError (exit 2, a bad input file) if it
    cannot be read."""
    if source == STDIO:
        with click.open_file(STDIO, "rb") as stream:
            return stream.read()
    try:
        return Path(source).read_bytes()
    except FileNotFoundError:
        raise CliError(f"no such {what + ' ' if what else ''}file: {source}", ExitCode.USAGE) from None
    except OSError as error:
        raise CliError(f"cannot read {source}: {error.strerror or error}", ExitCode.USAGE) from None


def parse_json(raw: bytes, source: str) -> Any:
    """The JSON document in `raw`, read strictly (`signing.json_input`). Raises CliError (exit 2,
    a bad input file) saying where and why it is not JSON a card can be read from: not JSON,
    nested over 64 levels, a member name repeated in one object, an unpaired surrogate."""
    from signing import JsonInputError, JsonSyntaxError, loads_json

    name = "standard input" if source == STDIO else source
    try:
        return loads_json(raw)
    except JsonSyntaxError as error:
        raise CliError(f"{name} is {error}", ExitCode.USAGE) from None  # "not JSON: ..."
    except JsonInputError as error:
        raise CliError(f"{name} is refused: {error}", ExitCode.USAGE) from None
