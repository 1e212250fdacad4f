"""Per-subscription rate limit at the ingress: a token bucket per subscription, in this process.

Each web process keeps its own buckets, so N processes admit up to N x the rate: the limit
protects the outbox from one runaway agent, it is not a billing meter, and a shared counter
would cost a database write per notification.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable

MAX_BUCKETS = 100_000


class RateLimiter:
    """`rate` notifications per second on average, bursts of up to `burst`."""

    def __init__(self, rate: float, burst: int, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._monotonic = monotonic
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def admit(self, key: Hashable) -> float:
        """0 when admitted, else how many seconds until one more notification would be."""
        now = self._monotonic()
        with self._lock:
            tokens, at = self._buckets.get(key, (self._burst, now))
            tokens = min(self._burst, tokens + (now - at) * self._rate)
            if tokens >= 1:
                self._store(key, tokens - 1, now)
                return 0.0
            self._store(key, tokens, now)
        return (1 - tokens) / self._rate

    def _store(self, key: Hashable, tokens: float, now: float) -> None:
        if len(self._buckets) >= MAX_BUCKETS and key not in self._buckets:
            self._buckets.clear()  # forgetting buckets only ever admits more, never less
        self._buckets[key] = (tokens, now)


def retry_after_seconds(wait: float) -> int:
    """A `Retry-After` value (whole seconds, at least 1) for a wait."""
    return max(1, math.ceil(wait))
