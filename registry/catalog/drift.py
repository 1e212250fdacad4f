"""What changed between two versions of a card, as JSON pointers (skills are matched by id)."""

from __future__ import annotations

from typing import Any

MAX_CHANGES = 100


def card_drift(old: Any, new: Any) -> dict[str, list[str]]:
    """Return {"added", "removed", "changed"} pointer lists, each capped at MAX_CHANGES."""
    changes: dict[str, list[str]] = {"added": [], "removed": [], "changed": []}
    _diff(old, new, "", changes)
    return {kind: paths[:MAX_CHANGES] for kind, paths in changes.items()}


def _diff(old: Any, new: Any, path: str, changes: dict[str, list[str]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            child = f"{path}/{_escape(key)}"
            if key not in new:
                changes["removed"].append(child)
            elif key not in old:
                changes["added"].append(child)
            else:
                _diff(old[key], new[key], child, changes)
    elif _keyed_list(old) and _keyed_list(new):
        _diff({item["id"]: item for item in old}, {item["id"]: item for item in new}, path, changes)
    elif old != new:
        changes["changed"].append(path or "/")


def _keyed_list(value: Any) -> bool:
    # Skills (and similar) are identified by "id": a reordering is not a change, an edit is.
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and isinstance(item.get("id"), str) for item in value)
        and len({item["id"] for item in value}) == len(value)
    )


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
