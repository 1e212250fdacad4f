"""Agentdex's own Agent Card (`/.well-known/agent-card.json`), signed with the registry key.

A v1.0 card with the 0.3 compatibility fields an SDK server adds (`url`, `preferredTransport`,
`protocolVersion`), so clients of either generation can read it. Its interface is the registry's
REST API; what it can do for an agent is listed as skills. The signature is made exactly like an
endorsement (same canonical form, `jku` = the registry's JWKS), so any A2A SDK verifies it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

from registry.trust import RegistryKeys
from signing import sign_card

_SKILLS = (
    (
        "find-agents",
        "Find agents",
        "Search registered A2A agents by skill tags, text, input/output modes, "
        "capabilities, protocol version, health and signature state.",
        ["discovery", "search", "registry"],
        ["Find verified agents tagged weather that stream"],
    ),
    (
        "register-agent",
        "Register an agent",
        "Fetch, validate and verify an Agent Card from its URL and list it.",
        ["registry", "validation"],
        ["Register https://agent.example.com"],
    ),
    (
        "verify-card",
        "Verify and endorse Agent Cards",
        "Verify an agent's card signatures against its owner's keys and serve the card countersigned by the registry.",
        ["signing", "trust", "jws"],
        ["Get the endorsed card of agent 5b0c…"],
    ),
)


def _version() -> str:
    try:
        return metadata.version("agentdex")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def registry_card(base: str) -> dict[str, Any]:
    """The unsigned card for a registry served at `base`."""
    api = f"{base}/v1"
    return {
        "name": "Agentdex",
        "description": "Registry and discovery service for A2A agents: validated, signature-checked and "
        f"health-checked Agent Cards. REST API described at {base}/openapi.json.",
        "version": _version(),
        "supportedInterfaces": [{"url": api, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        "provider": {"organization": "Agentdex", "url": base},
        "documentationUrl": f"{base}/openapi.json",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": id_, "name": name, "description": text, "tags": tags, "examples": examples}
            for id_, name, text, tags, examples in _SKILLS
        ],
        # 0.3 compatibility fields (as the official SDK's server adds them to a v1.0 card)
        "protocolVersion": "0.3.0",
        "url": api,
        "preferredTransport": "HTTP+JSON",
    }


class RegistryCard:
    """The signed card per base URL, re-signed when the active key changes."""

    def __init__(
        self,
        keys: RegistryKeys,
        *,
        alg: str,
        monotonic: Callable[[], float] = time.monotonic,
        cache_seconds: float = 60.0,
    ) -> None:
        self._keys = keys
        self._alg = alg
        self._monotonic = monotonic
        self._cache_seconds = cache_seconds
        self._signed: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def signed(self, base: str) -> dict[str, Any]:
        key = self._keys.active(self._alg)
        cached = self._signed.get((base, key.kid))
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        card = sign_card(registry_card(base), key, jku=f"{base}/.well-known/jwks.json")
        with self._lock:
            self._signed = {(base, key.kid): (self._monotonic() + self._cache_seconds, card)}
        return card
