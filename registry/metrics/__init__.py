"""Prometheus metrics: the recorder the domains call (`Metrics`, a null object when off), the
scrape-time gauges they offer (`GaugeFamily`), and `GET /metrics` (`registry.metrics.api`).
Plumbing that knows no domain; prometheus_client is imported only when metrics are on."""

from __future__ import annotations

from registry.metrics.recorder import (
    NULL_METRICS,
    ROUTE_KEY,
    GaugeFamily,
    GaugeSource,
    Metrics,
    count_registration,
    counting_registration,
)
from registry.settings_operations import OperationsSettings

__all__ = [
    "NULL_METRICS",
    "ROUTE_KEY",
    "GaugeFamily",
    "GaugeSource",
    "Metrics",
    "build_metrics",
    "count_registration",
    "counting_registration",
]


def build_metrics(operations: OperationsSettings) -> Metrics:
    """The process's recorder: nothing when AGENTDEX_METRICS=off; with AGENTDEX_METRICS_DIR, one
    that shares its values with the other processes writing there.

    Raises MetricsDirError when that directory cannot be used.
    """
    if operations.metrics == "off":
        return NULL_METRICS
    if operations.metrics_dir is not None:
        from registry.metrics.multiprocess import join

        join(operations.metrics_dir)  # before prometheus_client is imported
    from registry.metrics.prometheus import PrometheusMetrics

    return PrometheusMetrics(operations.metrics_dir)
