"""Relay tokens: the per-subscription secret an agent presents on every notification.

256 random bits, shown once, stored as SHA-256 (the token is high-entropy, so a fast hash is
enough: there is nothing to brute-force). Checked in constant time against the current hash
and, during the grace period after a rotation, the previous one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import secrets

TOKEN_PREFIX = "adxr_"
TOKEN_BYTES = 32  # 256 bits


def new_relay_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def hash_relay_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class TokenHashes:
    """What a subscription stores of its tokens."""

    current: str | None
    previous: str | None = None
    previous_until: dt.datetime | None = None

    def accepts(self, presented: str, now: dt.datetime) -> bool:
        """True when `presented` is the current token, or the previous one within its grace."""
        digest = hash_relay_token(presented)
        # Both comparisons always run, so the time taken does not say which one matched.
        current = hmac.compare_digest(digest, self.current or "")
        previous = hmac.compare_digest(digest, self.previous or "")
        in_grace = self.previous_until is not None and now < self.previous_until
        return (current and bool(self.current)) or (previous and bool(self.previous) and in_grace)
