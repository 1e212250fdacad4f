"""Private keys at rest: sealed with AES-256-GCM under a key derived from `AGENTDEX_SECRET_KEY`.

HKDF-SHA256 turns the operator's secret (any string of 16+ characters) into a uniform 256-bit
key, with a purpose label so the same secret can key other things without reuse. The kid is
the associated data: a sealed key copied onto another row does not open.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from registry.trust.errors import RegistryKeyUnavailable

_FORMAT = b"\x01"  # nonce (12 bytes) + ciphertext with its 16-byte tag follow
_NONCE_BYTES = 12
_PURPOSE = b"agentdex registry signing keys v1"


class KeySealer:
    def __init__(self, secret: str) -> None:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(secret.encode("utf-8"))
        self._aead = AESGCM(derived)

    def seal(self, kid: str, private_key: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return _FORMAT + nonce + self._aead.encrypt(nonce, private_key, kid.encode("utf-8"))

    def unseal(self, kid: str, sealed: bytes) -> bytes:
        """The private key bytes. Raises RegistryKeyUnavailable if they do not open (another secret)."""
        if sealed[:1] != _FORMAT or len(sealed) < 1 + _NONCE_BYTES + 16:
            raise RegistryKeyUnavailable(f"registry key {kid} is not sealed in a format this version reads")
        nonce, ciphertext = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
        try:
            return self._aead.decrypt(nonce, ciphertext, kid.encode("utf-8"))
        except InvalidTag:
            raise RegistryKeyUnavailable(
                f"registry key {kid} does not open with this AGENTDEX_SECRET_KEY (was the secret changed?)"
            ) from None
