"""What the domains record, as one-line calls on a `Metrics` collaborator.

`Metrics` itself is the null object (AGENTDEX_METRICS=off): every call does nothing, so a service
never asks whether metrics are on. `registry.metrics.prometheus.PrometheusMetrics` records for real.
Labels are bounded by construction: outcomes and rule ids come from fixed sets in the code, routes
are URL rule templates, never agent ids or URLs.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from registry.errors import RegistryError

# The WSGI environ key under which the layer that matched a request leaves its route template.
ROUTE_KEY = "agentdex.route"
UNMATCHED_ROUTE = "unmatched"  # a path no route answers (404), one label for them all


@dataclasses.dataclass(frozen=True)
class GaugeFamily:
    """Gauges a domain computes at scrape time from the database (the truth shared by every
    process): `samples` maps label values (in `labels` order) to the value."""

    name: str
    documentation: str
    labels: tuple[str, ...]
    samples: Mapping[tuple[str, ...], float]


# A domain's scrape-time gauges: called once per scrape, by the process answering it.
GaugeSource = Callable[[], list[GaugeFamily]]


class Metrics:
    """Records nothing: the recorder when metrics are off, and the interface of the real one."""

    enabled = False

    def http_request(self, route: str, method: str, status: int, seconds: float) -> None:
        """One HTTP request answered: its route template, method, status and duration."""

    def registration(self, outcome: str) -> None:
        """One registration attempt: `created`, `unchanged`, or the error code that refused it."""

    def validation(self, valid: bool, first_error_rule: str | None) -> None:
        """One Agent Card validated; an invalid one by the rule id of its first error."""

    def crawl(self, outcome: str, seconds: float) -> None:
        """One re-crawl of a card: `fetched`, `not_modified`, `invalid` or `failed`."""

    def probe(self, outcome: str, seconds: float) -> None:
        """One health probe of an interface, by its outcome (`up`, `degraded`, `down`, ...)."""

    def jwks_fetch(self, outcome: str) -> None:
        """One JWKS document fetched (`ok`) or not (`failed`)."""

    def relay_accepted(self) -> None:
        """One notification committed to the relay's outbox."""

    def relay_attempt(self, state: str, seconds: float | None) -> None:
        """One delivery attempt recorded: the message is now `delivered`, `pending` (to be
        retried) or `dead`; `seconds` is how long the target took, when it answered."""

    def job_run(self, job: str, outcome: str, seconds: float) -> None:
        """One run of a scheduled job: `ok`, `failed_items` (some items failed) or `error`."""

    def watch_pool(self, engine: Any, pool: str) -> None:
        """Keep gauges of `engine`'s connection pool (in use, overflow) under the label `pool`."""

    def add_gauges(self, source: GaugeSource) -> None:
        """Compute `source`'s gauges at every scrape."""

    def scrape(self) -> tuple[bytes, str]:
        """The text exposition and its content type."""
        raise NotImplementedError("metrics are off (AGENTDEX_METRICS=off)")


NULL_METRICS = Metrics()
INVALID_CARD = "invalid_card"  # the error code of a card that failed validation (registry.errors.InvalidCard)


def count_registration(metrics: Metrics, outcome: str, details: Mapping[str, Any] | None = None) -> None:
    """One registration attempt that ended in `outcome` (`created`, `unchanged` or an error code with
    its `details`), and the validation it implies: a stored card was valid, an `invalid_card` was not."""
    metrics.registration(outcome)
    if outcome == "created":
        metrics.validation(True, None)
    elif outcome == INVALID_CARD:
        metrics.validation(False, first_error_rule((details or {}).get("issues") or []))


@contextlib.contextmanager
def counting_registration(metrics: Metrics) -> Iterator[RegistrationAttempt]:
    """Count the registration the block attempts: the `outcome` it sets, or the code of the
    registry error it raises (re-raised)."""
    attempt = RegistrationAttempt()
    try:
        yield attempt
    except RegistryError as error:
        count_registration(metrics, error.code, error.details)
        raise
    count_registration(metrics, attempt.outcome)


@dataclasses.dataclass
class RegistrationAttempt:
    outcome: str = "created"


def first_error_rule(issues: list[Mapping[str, Any]]) -> str | None:
    """The rule id of the first issue of severity `error` in the issue dicts of a report."""
    return next((issue.get("rule") for issue in issues if issue.get("severity") == "error"), None)
