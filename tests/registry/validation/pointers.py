"""Resolving the JSON pointers of issues against the card they describe (RFC 6901)."""

from __future__ import annotations

from typing import Any

_MISSING = object()


def resolve(document: Any, path: str) -> Any:
    """The value at `path`, or `_MISSING` when some segment does not exist."""
    if path == "":
        return document
    if not path.startswith("/"):
        return _MISSING
    value = document
    for raw in path[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


def resolves_here_or_in_parent(document: Any, path: str) -> bool:
    """Issues about a missing member name the member, so its parent must exist."""
    if resolve(document, path) is not _MISSING:
        return True
    parent = path.rsplit("/", 1)[0]
    return path.startswith("/") and resolve(document, parent) is not _MISSING
