"""Streaming a JSON Lines file into the registry's bulk import endpoint, in batches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from cli.client import RegistryClient
from cli.exits import CliError, ExitCode


def read_items(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, item); a line that is not JSON stops the import with its number."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error}", ExitCode.USAGE) from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as error:
                raise CliError(f"{path}:{number} is not JSON: {error}", ExitCode.USAGE) from None


def _batches(path: Path, size: int) -> Iterator[list[tuple[int, Any]]]:
    batch: list[tuple[int, Any]] = []
    for item in read_items(path):
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def import_file(client: RegistryClient, path: Path, size: int, *, progress: bool) -> dict[str, Any]:
    """Send the file in batches; return created/failed counts and each failure with its line."""
    total = sum(1 for _ in read_items(path))
    summary: dict[str, Any] = {"created": 0, "failed": 0, "errors": []}
    with click.progressbar(length=total, label="importing", file=None if progress else _Null()) as bar:
        for batch in _batches(path, size):
            result = client.call("POST", "/v1/agents/import", json={"items": [item for _, item in batch]})
            summary["created"] += result["created"]
            summary["failed"] += result["failed"]
            for outcome in result["results"]:
                if outcome["error"]:
                    summary["errors"].append({"line": batch[outcome["index"]][0], "error": outcome["error"]})
            bar.update(len(batch))
    for failure in summary["errors"][:20]:
        click.echo(f"line {failure['line']}: {failure['error']['message']}", err=True)
    return summary


class _Null:
    def write(self, _text: str) -> None:
        pass

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
