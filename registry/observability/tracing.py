"""Traces, optional: with OTEL_EXPORTER_OTLP_ENDPOINT set, requests, database statements, outbound
calls and job runs become OpenTelemetry spans exported over OTLP/HTTP (`registry.observability.otel`,
the only module that imports OpenTelemetry). Unset, tracing is `NullTracing` and nothing of
OpenTelemetry is imported.

OpenTelemetry's tracer provider and its library instrumentations are process-wide, so the tracing
started here is too: `start_tracing` sets it up once per process and later calls return it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from registry.settings_env import SettingsError

if TYPE_CHECKING:
    from flask import Flask
    from sqlalchemy import Engine

    from registry.settings_operations import OperationsSettings

WsgiApp = Callable[..., Any]
INSTALL_HINT = "pip install 'agentdex[otel]'"
# What `registry.observability.otel` imports: the `otel` extra of setup.py.
DISTRIBUTIONS = (
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-instrumentation-flask",
    "opentelemetry-instrumentation-requests",
    "opentelemetry-instrumentation-sqlalchemy",
    "opentelemetry-instrumentation-urllib3",
    "opentelemetry-instrumentation-wsgi",
)


class TracingUnavailable(SettingsError):
    """OTEL_EXPORTER_OTLP_ENDPOINT is set, but the OpenTelemetry packages are not installed."""


def check_tracing_endpoint(endpoint: str) -> None:
    """Raises SettingsError when traces cannot go to `endpoint`: not an http(s) URL, or the `otel`
    extra is not installed (looked up by distribution: nothing is imported)."""
    if not endpoint.startswith(("http://", "https://")):
        raise SettingsError(
            f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint!r} is not an http(s) URL: give the collector's "
            "OTLP/HTTP base URL, e.g. http://otel-collector:4318"
        )
    missing = [name for name in DISTRIBUTIONS if not _installed(name)]
    if missing:
        raise TracingUnavailable(
            f"OTEL_EXPORTER_OTLP_ENDPOINT is set but {', '.join(missing)} is not installed: "
            f"{INSTALL_HINT}, or unset the variable"
        )


def _installed(distribution: str) -> bool:
    import importlib.metadata  # only when tracing is asked for

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


class Tracing(Protocol):
    def instrument_app(self, app: Flask) -> None:
        """Trace the Flask app's requests (a server span named by the route)."""

    def instrument_engines(self, engines: Sequence[Engine]) -> None:
        """Trace the statements run on these engines."""

    def server_spans(self, wsgi_app: WsgiApp, route: str) -> WsgiApp:
        """`wsgi_app` (an endpoint answered in front of Flask) with a server span per request."""

    def span(self, name: str, attributes: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
        """A span around the block (a job's run); yields an object with `set_attribute`."""


class _NoSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        return None


class NullTracing:
    """Tracing off: every method does nothing."""

    def instrument_app(self, app: Flask) -> None:
        return None

    def instrument_engines(self, engines: Sequence[Engine]) -> None:
        return None

    def server_spans(self, wsgi_app: WsgiApp, route: str) -> WsgiApp:
        return wsgi_app

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
        yield _NoSpan()


_active: Tracing = NullTracing()


def start_tracing(settings: OperationsSettings) -> Tracing:
    """The process's tracing: OpenTelemetry exporting to `settings.otlp_endpoint` when it is set
    (started on the first call), else `NullTracing`. Raises TracingUnavailable when the endpoint
    is set but the `otel` extra is not installed."""
    global _active
    if settings.otlp_endpoint is None:
        return _active
    if isinstance(_active, NullTracing):
        try:
            from registry.observability.otel import OtelTracing
        except ImportError as error:
            raise TracingUnavailable(
                f"OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed ({error.name} is "
                f"missing): {INSTALL_HINT}, or unset the variable"
            ) from None
        _active = OtelTracing.start(settings.otlp_endpoint)
    return _active


def job_span(job: str) -> contextlib.AbstractContextManager[Any]:
    """A span around one run of a scheduled job (the outbound calls and statements of the run are
    its children)."""
    return _active.span(f"job {job}", {"agentdex.job": job})
