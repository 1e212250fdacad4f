"""Valid Agent Cards of every protocol version, built for tests."""

from __future__ import annotations

import copy
from typing import Any


def make_card(
    name: str,
    *,
    tags: list[str] | None = None,
    url: str = "https://agent.example.com/a2a",
    skills: int = 1,
    description: str | None = None,
    streaming: bool = False,
    push: bool = False,
) -> dict[str, Any]:
    """A valid v1.0 card with `skills` skills carrying `tags`."""
    return {
        "name": name,
        "description": description or f"{name} answers questions",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "provider": {"organization": "Example Org", "url": "https://example.com"},
        "capabilities": {"streaming": streaming, "pushNotifications": push},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": f"skill-{i}",
                "name": f"{name} skill {i}",
                "description": f"Skill {i} of {name}",
                "tags": list(tags or ["general"]),
                "examples": [f"example {i} for {name}"],
            }
            for i in range(skills)
        ],
    }


def make_v03_card(
    name: str, *, tags: list[str] | None = None, url: str = "https://agent.example.com/a2a"
) -> dict[str, Any]:
    """A valid v0.3 card."""
    return {
        "protocolVersion": "0.3.0",
        "name": name,
        "description": f"{name} (0.3)",
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": "0.3.1",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s1", "name": "Skill", "description": "does things", "tags": list(tags or ["general"])}],
    }


def with_changes(card: dict[str, Any], **changes: Any) -> dict[str, Any]:
    new = copy.deepcopy(card)
    new.update(changes)
    return new
