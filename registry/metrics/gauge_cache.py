"""Scrape-time gauges that stay cheap on a large catalog.

A domain's gauges are one query per scrape. While that query is cheap (a small catalog, the
relay's partial index) every scrape computes it afresh. Once it is not (the GROUP BY over 100,000
agents reads the whole table: about half a second on SQLite), a scrape answers with the figures of
the last computation and, when they are older than `max_age`, has a background thread compute
them again: /metrics keeps answering in milliseconds, and the figures lag by at most `max_age`
plus one computation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from registry.metrics.recorder import GaugeFamily, GaugeSource

log = logging.getLogger(__name__)
CHEAP_SECONDS = 0.010  # a computation this quick is done by every scrape
MAX_AGE_SECONDS = 15.0  # a common scrape interval


class RefreshedGauges:
    """A `GaugeSource` computed at each scrape while cheap, else refreshed in the background."""

    def __init__(
        self,
        source: GaugeSource,
        *,
        cheap: float = CHEAP_SECONDS,
        max_age: float = MAX_AGE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._source = source
        self._cheap = cheap
        self._max_age = max_age
        self._monotonic = monotonic
        self._families: list[GaugeFamily] | None = None
        self._computed_at = 0.0
        self._took = 0.0
        self._lock = threading.Lock()
        self._refreshing: threading.Thread | None = None

    def __call__(self) -> list[GaugeFamily]:
        families = self._families
        if families is None or self._took <= self._cheap:
            return self._compute()
        if self._monotonic() - self._computed_at > self._max_age:
            self._refresh_in_background()
        return families

    def wait_for_refresh(self) -> None:
        """Block until a background refresh in progress is done (tests, shutdown)."""
        refreshing = self._refreshing
        if refreshing is not None:
            refreshing.join()

    def _compute(self) -> list[GaugeFamily]:
        started = self._monotonic()
        families = self._source()
        with self._lock:
            self._families, self._computed_at, self._took = families, started, self._monotonic() - started
        return families

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refreshing is not None:
                return
            self._refreshing = threading.Thread(target=self._refresh, name="agentdex-metrics-gauges", daemon=True)
        self._refreshing.start()

    def _refresh(self) -> None:
        try:
            self._compute()
        except Exception:  # the database is away: the last figures stay, the next scrape tries again
            log.warning("scrape-time gauges could not be computed", exc_info=True)
        finally:
            with self._lock:
                self._refreshing = None
