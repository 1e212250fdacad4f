"""Client webhook credentials, encrypted at rest: AES-256-GCM under a key derived from
`AGENTDEX_SECRET_KEY` by HKDF-SHA256 with a purpose label, each value sealed with a random 96-bit
nonce and bound to its row by the associated data (the subscription id)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_VERSION = b"\x01"
_NONCE_BYTES = 12
_PURPOSE = b"agentdex relay client secrets v1"


class SecretBoxError(Exception):
    """A sealed value does not open: the secret key changed or the value was tampered with."""


class SecretBox:
    """Seals and opens small JSON objects (the client's webhook credentials)."""

    def __init__(self, secret_key: str, *, nonces: Callable[[int], bytes] = os.urandom) -> None:
        if not secret_key:
            raise ValueError("SecretBox needs AGENTDEX_SECRET_KEY")
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(secret_key.encode("utf-8"))
        self._aead = AESGCM(key)
        self._nonces = nonces

    def seal(self, values: dict[str, str], bound_to: str) -> bytes:
        nonce = self._nonces(_NONCE_BYTES)
        plaintext = json.dumps(values, separators=(",", ":")).encode("utf-8")
        return _VERSION + nonce + self._aead.encrypt(nonce, plaintext, bound_to.encode("utf-8"))

    def open(self, sealed: bytes, bound_to: str) -> dict[str, str]:
        """The values sealed for `bound_to`. Raises SecretBoxError."""
        if sealed[:1] != _VERSION or len(sealed) < 1 + _NONCE_BYTES + 16:
            raise SecretBoxError("the sealed value has an unknown format")
        nonce, ciphertext = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
        try:
            plaintext = self._aead.decrypt(nonce, ciphertext, bound_to.encode("utf-8"))
        except InvalidTag:
            raise SecretBoxError(
                "the sealed value does not open: AGENTDEX_SECRET_KEY changed, or it was altered"
            ) from None
        values = json.loads(plaintext)
        return {str(k): str(v) for k, v in values.items()}
