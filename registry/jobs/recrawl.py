"""When a document fetched on a schedule (an Agent Card, a domain's ARD manifest) is fetched again."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random


@dataclasses.dataclass(frozen=True)
class CrawlPolicy:
    """Seconds between fetches (AGENTDEX_CRAWL_*): the answer's max-age within bounds, else the
    interval; after failures, the interval doubled per failure up to the maximum; jittered."""

    interval: float = 3600.0
    min_interval: float = 300.0
    max_interval: float = 86_400.0
    jitter: float = 0.1

    def delay(self, max_age: int | None) -> float:
        """Seconds until the next crawl after an answer: max-age within bounds, else the interval."""
        if max_age is None:
            return self.interval
        return min(max(float(max_age), self.min_interval), self.max_interval)

    def backoff(self, failures: int) -> float:
        return min(self.interval * 2 ** min(failures - 1, 30), self.max_interval)

    def next_at(self, now: dt.datetime, delay: float, rng: random.Random) -> dt.datetime:
        """`delay` seconds from `now`, spread by ± `jitter` so that a batch does not come due at once."""
        return now + dt.timedelta(seconds=delay * (1 + rng.uniform(-self.jitter, self.jitter)))
