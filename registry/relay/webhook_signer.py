"""Standard Webhooks signatures on relayed notifications, made with the registry's Ed25519 key.

Standard Webhooks (asymmetric variant): `webhook-signature: v1a,<base64 Ed25519 signature>` over
`"{webhook-id}.{webhook-timestamp}.{body}"`, the timestamp in integer Unix seconds. Receivers
verify with the registry's public keys from its JWKS; during a key rotation the JWKS holds both
keys and a receiver tries each EdDSA key.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Protocol

from signing import SigningKey

SCHEME = "v1a"


class WebhookSigner(Protocol):
    def sign(self, msg_id: str, timestamp: int, body: bytes) -> str:
        """The `webhook-signature` header value."""
        ...


def signed_content(msg_id: str, timestamp: int, body: bytes) -> bytes:
    return f"{msg_id}.{timestamp}.".encode() + body


class Ed25519WebhookSigner:
    """Signs with whatever key `active_key()` returns now (it may rotate between calls)."""

    def __init__(self, active_key: Callable[[], SigningKey]) -> None:
        self._active_key = active_key

    def sign(self, msg_id: str, timestamp: int, body: bytes) -> str:
        key = self._active_key()
        if key.algorithm.value != "EdDSA":
            raise ValueError(f"Standard Webhooks v1a signatures need an Ed25519 key, not {key.algorithm.value}")
        signature = key.sign(signed_content(msg_id, timestamp, body))
        return f"{SCHEME},{base64.b64encode(signature).decode('ascii')}"

