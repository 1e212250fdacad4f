"""When to try a failed delivery again: the back-off schedule, its jitter, and `Retry-After`."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import random

MIN_RETRY_AFTER = 1.0


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """`schedule[i]` is the delay before attempt i + 1 (0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
    by default), each spread by +/- `jitter` so that retries of many messages failed by one outage
    do not arrive together. A `Retry-After` the target sends replaces the scheduled delay, bounded
    to [1 s, `max_retry_after`] so a receiver can neither make us hammer it nor park a message
    for days."""

    schedule: tuple[float, ...]
    jitter: float = 0.2
    max_retry_after: float = 3600.0

    @property
    def max_attempts(self) -> int:
        return len(self.schedule)

    def first_delay(self, rng: random.Random) -> float:
        return self._spread(self.schedule[0], rng)

    def next_delay(self, attempts_made: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds until the next attempt after `attempts_made` attempts; None when none is left."""
        if attempts_made >= self.max_attempts:
            return None
        if retry_after is not None:
            return min(max(retry_after, MIN_RETRY_AFTER), self.max_retry_after)
        return self._spread(self.schedule[attempts_made], rng)

    def _spread(self, delay: float, rng: random.Random) -> float:
        return delay * (1 + rng.uniform(-self.jitter, self.jitter))


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds from `now` that a `Retry-After` value asks for (RFC 9110 §10.2.3: delay-seconds or
    an HTTP-date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - now).total_seconds())
