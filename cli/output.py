"""How commands print: the API's JSON as is with `--json`, otherwise lines and aligned tables."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click


def emit(payload: Any, as_json: bool, human: Callable[[Any], None]) -> None:
    """Print `payload` as JSON, or hand it to `human` to print for a person."""
    if as_json:
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        human(payload)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Columns padded to their widest cell; None prints as "-". The last column is not padded."""
    cells = [list(headers)] + [["-" if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        click.echo("  ".join([*(cell.ljust(width) for cell, width in zip(row[:-1], widths)), row[-1]]))


def page_lines(page: dict[str, Any], item_lines: Callable[[Any], None]) -> None:
    """Each item of an API page printed by `item_lines`, then the --cursor that continues it."""
    for item in page["items"]:
        item_lines(item)
    more(page)


def more(page: dict[str, Any]) -> None:
    """The --cursor that continues an API page, when there is more."""
    if page.get("nextCursor"):
        click.echo(f"more: --cursor {page['nextCursor']}")


def short_time(iso: str | None) -> str | None:
    """An API time ("2026-01-31T12:00:00.123456Z") to the second, for a table."""
    return iso[:19].replace("T", " ") if iso else None
