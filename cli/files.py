"""Reading the files the offline commands work on: a path or `-` for standard input, as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cli.exits import CliError, ExitCode

STDIO = "-"


def read_bytes(source: str, what: str | None = None) -> bytes:
    """Bytes of a file or standard input (`-`). Raises CliError (exit 2) if it cannot be read."""
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
    """The JSON document in `raw`. Raises CliError (exit 2) saying where and why it is not JSON."""
    name = "standard input" if source == STDIO else source
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise CliError(f"{name} is not JSON: it is not UTF-8 text", ExitCode.USAGE) from None
    except json.JSONDecodeError as error:
        raise CliError(
            f"{name} is not JSON: {error.msg} at line {error.lineno}, column {error.colno}", ExitCode.USAGE
        ) from None
    except RecursionError:
        raise CliError(f"{name} is nested too deeply to be an Agent Card", ExitCode.USAGE) from None
