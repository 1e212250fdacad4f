"""The real recorder: `prometheus_client` metrics, and their text exposition.

Imported only when metrics are on, after `registry.metrics.multiprocess.join` has set
PROMETHEUS_MULTIPROC_DIR when several processes share a directory: prometheus_client decides at
import whether values live in memory or in that directory's files. With a directory, a scrape
merges every process's files (`MultiProcessCollector`); without one, it reads this process's own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import event
from sqlalchemy.pool import QueuePool

from registry.metrics.gauge_cache import RefreshedGauges
from registry.metrics.multiprocess import sweep_dead_processes
from registry.metrics.recorder import GaugeFamily, GaugeSource, Metrics

HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
OUTBOUND_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
JOB_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
RELAY_STATES = {"delivered": "delivered", "pending": "retried", "dead": "dead_lettered"}


class PrometheusMetrics(Metrics):
    enabled = True

    def __init__(self, directory: Path | None = None) -> None:
        """`directory`: the multiprocess directory every process of the deployment writes to."""
        self._directory = directory
        # `_created` series are not kept in multiprocess mode: without them in either mode, a
        # single process and a scaled-out deployment expose the same series.
        disable_created_metrics()
        self._registry = CollectorRegistry(auto_describe=True)
        self._scraped = ScrapeTimeGauges()
        self._define(self._registry)
        if directory is None:  # one process: its own registry is the exposition
            self._registry.register(self._scraped)
        # `labels()` takes a lock and builds a key on every call; a request's children are reused.
        self._request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def _define(self, registry: CollectorRegistry) -> None:
        self._requests = Counter(
            "agentdex_http_requests", "HTTP requests answered", ["route", "method", "status"], registry=registry
        )
        self._request_seconds = Histogram(
            "agentdex_http_request_duration_seconds",
            "Time to answer an HTTP request",
            ["route", "method"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self._registrations = Counter(
            "agentdex_registrations", "Agent registrations attempted, by outcome", ["outcome"], registry=registry
        )
        self._validations = Counter(
            "agentdex_card_validations",
            "Agent Cards validated, by outcome and the rule id of the first error",
            ["outcome", "rule"],
            registry=registry,
        )
        self._crawls = Counter("agentdex_crawls", "Card re-crawls, by outcome", ["outcome"], registry=registry)
        self._crawl_seconds = Histogram(
            "agentdex_crawl_duration_seconds", "Time to re-crawl a card", buckets=OUTBOUND_BUCKETS, registry=registry
        )
        self._probes = Counter(
            "agentdex_probes", "Health probes of interfaces, by outcome", ["outcome"], registry=registry
        )
        self._probe_seconds = Histogram(
            "agentdex_probe_duration_seconds", "Time to probe an interface", buckets=OUTBOUND_BUCKETS, registry=registry
        )
        self._jwks = Counter(
            "agentdex_jwks_fetches", "JWKS documents fetched, by outcome", ["outcome"], registry=registry
        )
        self._relay = {
            "accepted": Counter("agentdex_relay_messages_accepted", "Notifications accepted", registry=registry),
            "delivered": Counter("agentdex_relay_messages_delivered", "Notifications delivered", registry=registry),
            "retried": Counter("agentdex_relay_messages_retried", "Delivery attempts to retry", registry=registry),
            "dead_lettered": Counter(
                "agentdex_relay_messages_dead_lettered", "Notifications given up on", registry=registry
            ),
        }
        self._delivery_seconds = Histogram(
            "agentdex_relay_delivery_duration_seconds",
            "Time a webhook took to answer a delivery attempt",
            buckets=OUTBOUND_BUCKETS,
            registry=registry,
        )
        self._jobs = Counter(
            "agentdex_job_runs", "Scheduled job runs, by outcome", ["job", "outcome"], registry=registry
        )
        self._job_seconds = Histogram(
            "agentdex_job_run_duration_seconds", "Time a job run took", ["job"], buckets=JOB_BUCKETS, registry=registry
        )
        # Per process; summed over the live processes of the directory ("livesum").
        self._pool_in_use = Gauge(
            "agentdex_db_pool_connections_in_use",
            "Database connections checked out of the pool",
            ["pool"],
            multiprocess_mode="livesum",
            registry=registry,
        )
        self._pool_overflow = Gauge(
            "agentdex_db_pool_overflow",
            "Connections open beyond the pool's size",
            ["pool"],
            multiprocess_mode="livesum",
            registry=registry,
        )

    # -- recording ------------------------------------------------------------------------

    def http_request(self, route: str, method: str, status: int, seconds: float) -> None:
        method = method if method in HTTP_METHODS else "OTHER"
        key = (route, method, status)
        children = self._request_children.get(key)
        if children is None:
            children = (self._requests.labels(route, method, str(status)), self._request_seconds.labels(route, method))
            self._request_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def registration(self, outcome: str) -> None:
        self._registrations.labels(outcome).inc()

    def validation(self, valid: bool, first_error_rule: str | None) -> None:
        self._validations.labels("valid" if valid else "invalid", "" if valid else first_error_rule or "").inc()

    def crawl(self, outcome: str, seconds: float) -> None:
        self._crawls.labels(outcome).inc()
        self._crawl_seconds.observe(seconds)

    def probe(self, outcome: str, seconds: float) -> None:
        self._probes.labels(outcome).inc()
        self._probe_seconds.observe(seconds)

    def jwks_fetch(self, outcome: str) -> None:
        self._jwks.labels(outcome).inc()

    def relay_accepted(self) -> None:
        self._relay["accepted"].inc()

    def relay_attempt(self, state: str, seconds: float | None) -> None:
        self._relay[RELAY_STATES[state]].inc()
        if seconds is not None:
            self._delivery_seconds.observe(seconds)

    def job_run(self, job: str, outcome: str, seconds: float) -> None:
        self._jobs.labels(job, outcome).inc()
        self._job_seconds.labels(job).observe(seconds)

    def watch_pool(self, engine: Any, pool: str) -> None:
        watched = engine.pool
        if not isinstance(watched, QueuePool):  # SQLite in memory: one connection, nothing to watch
            return
        in_use, overflow = self._pool_in_use.labels(pool), self._pool_overflow.labels(pool)

        def lent(*_: Any) -> None:  # every checkout and checkin: one write each
            in_use.set(watched.checkedout())

        def opened_or_closed(*_: Any) -> None:  # overflow changes only when a connection does
            overflow.set(max(0, watched.overflow()))

        for name, listener in (("checkout", lent), ("checkin", lent), ("connect", opened_or_closed)):
            event.listen(watched, name, listener)
        event.listen(watched, "close", opened_or_closed)
        event.listen(watched, "close_detached", opened_or_closed)
        lent()
        opened_or_closed()

    def add_gauges(self, source: GaugeSource) -> None:
        self._scraped.add(RefreshedGauges(source))

    # -- exposition -----------------------------------------------------------------------

    def scrape(self) -> tuple[bytes, str]:
        if self._directory is None:
            return generate_latest(self._registry), CONTENT_TYPE_LATEST
        sweep_dead_processes(self._directory)
        registry = CollectorRegistry(auto_describe=False)
        MultiProcessCollector(registry, path=str(self._directory))
        registry.register(self._scraped)
        return generate_latest(registry), CONTENT_TYPE_LATEST


class ScrapeTimeGauges(Collector):
    """The domains' gauges, computed when scraped (the agents by state, the relay's queue)."""

    def __init__(self) -> None:
        self._sources: list[GaugeSource] = []
        self._lock = threading.Lock()

    def add(self, source: GaugeSource) -> None:
        with self._lock:
            self._sources.append(source)

    def describe(self) -> list[Metric]:
        return []  # names known only once computed; nothing to check for duplicates at registration

    def collect(self) -> Iterator[Metric]:
        for source in list(self._sources):
            for family in source():
                yield _gauge_family(family)


def _gauge_family(family: GaugeFamily) -> GaugeMetricFamily:
    metric = GaugeMetricFamily(family.name, family.documentation, labels=family.labels)
    for labels, value in family.samples.items():
        metric.add_metric(list(labels), value)
    return metric
