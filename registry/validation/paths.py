"""JSON pointers (RFC 6901) into a card, and the object entries of its lists."""

from __future__ import annotations

from typing import Any


def pointer(*parts: str | int) -> str:
    """Join path segments into a JSON pointer, escaping `~` and `/` (RFC 6901 §3)."""
    return child("", *parts)


def child(path: str, *parts: str | int) -> str:
    """The pointer of a member below `path`."""
    for part in parts:
        if isinstance(part, int):
            path = f"{path}/{part}"
            continue
        text = part
        if "~" in text or "/" in text:
            text = text.replace("~", "~0").replace("/", "~1")
        path = f"{path}/{text}"
    return path


def object_items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The object entries of a list with their indexes, for rules that build a path only when
    they report something."""
    if not isinstance(value, list):
        return []
    return [(index, item) for index, item in enumerate(value) if isinstance(item, dict)]
