"""Seeing inside a running registry: request ids, the log format, and optional OpenTelemetry
traces. Plumbing that knows no domain; OpenTelemetry itself is imported only by `otel`, and only
when tracing is turned on."""

from registry.observability.logs import configure_logging
from registry.observability.request_ids import RequestIdMiddleware, accepted_request_id
from registry.observability.tracing import (
    NullTracing,
    Tracing,
    TracingUnavailable,
    job_span,
    start_tracing,
)

__all__ = [
    "NullTracing",
    "RequestIdMiddleware",
    "Tracing",
    "TracingUnavailable",
    "accepted_request_id",
    "configure_logging",
    "job_span",
    "start_tracing",
]
