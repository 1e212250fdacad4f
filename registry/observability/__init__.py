"""Seeing inside a running registry: request ids, the log format, and optional OpenTelemetry
traces. Plumbing that knows no domain; OpenTelemetry itself is imported only by `otel`, and only
when tracing is turned on."""

from registry.observability.logs import configure_logging, current_trace_ids
from registry.observability.request_ids import (
    HEADER as REQUEST_ID_HEADER,
)
from registry.observability.request_ids import (
    RequestIdMiddleware,
    accepted_request_id,
    current_request_id,
)
from registry.observability.tracing import (
    NullTracing,
    Tracing,
    TracingUnavailable,
    active_tracing,
    job_span,
    start_tracing,
)

__all__ = [
    "REQUEST_ID_HEADER",
    "NullTracing",
    "RequestIdMiddleware",
    "Tracing",
    "TracingUnavailable",
    "accepted_request_id",
    "active_tracing",
    "configure_logging",
    "current_request_id",
    "current_trace_ids",
    "job_span",
    "start_tracing",
]
