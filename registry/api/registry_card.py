"""Agentdex's own Agent Card (`/.well-known/agent-card.json`), signed with the registry key.

The card of the registry's A2A agent (`registry.a2a`): its JSON-RPC interface (A2A 1.0, and 0.3
on the same URL) and its HTTP+JSON interface (1.0), both of which answer; its skills, modes and
capabilities as the endpoints have them (no streaming, no push, no extended card); the bearer
token `register-agent` needs as its one security scheme. A v1.0 card with the 0.3 fields the
official SDK's server adds (`url` and `preferredTransport` of the first 0.3 interface, its
`protocolVersion`; each security scheme and skill requirement also in its 0.3 form), so clients
of either generation read it. The signature is made exactly like an endorsement (same canonical
form, `jku` = the registry's JWKS), so any A2A SDK verifies it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

from registry.a2a import INPUT_MODES, JSONRPC_PATH, OUTPUT_MODES, REST_PATH, SKILLS, TOKEN_SCHEME, WRITE_SCOPE
from registry.trust import RegistryKeys
from signing import sign_card

TOKEN_HELP = (
    f"An Agentdex API token with the {WRITE_SCOPE} scope (`agentdex tokens create`), sent as "
    "Authorization: Bearer <token>. Only register-agent needs one."
)


def _version() -> str:
    try:
        return metadata.version("agentdex")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def registry_card(base: str) -> dict[str, Any]:
    """The unsigned card for a registry served at `base`."""
    jsonrpc, rest = f"{base}{JSONRPC_PATH}", f"{base}{REST_PATH}"
    return {
        "name": "Agentdex",
        "description": "Registry and discovery service for A2A agents: validated, signature-checked and "
        "health-checked Agent Cards. Ask it in A2A to find agents for a task (find-agents), to check a "
        f"card (verify-card) or to list one (register-agent). REST API at {base}/v1, described at "
        f"{base}/openapi.json.",
        "supportedInterfaces": [
            {"url": jsonrpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": rest, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": jsonrpc, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "provider": {"organization": "Agentdex", "url": base},
        "version": _version(),
        "documentationUrl": f"{base}/openapi.json",
        "capabilities": {"streaming": False, "pushNotifications": False, "extendedAgentCard": False},
        "securitySchemes": {
            TOKEN_SCHEME: {
                "httpAuthSecurityScheme": {"scheme": "Bearer", "description": TOKEN_HELP},
                # the same scheme in its 0.3 form
                "type": "http",
                "scheme": "Bearer",
                "description": TOKEN_HELP,
            }
        },
        "defaultInputModes": list(INPUT_MODES),
        "defaultOutputModes": list(OUTPUT_MODES),
        "skills": [skill.card_json() for skill in SKILLS],
        # 0.3 compatibility fields: the first 0.3 interface (as the official SDK's server adds them)
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "url": jsonrpc,
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
