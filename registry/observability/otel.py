"""OpenTelemetry, when tracing is on: the SDK's tracer provider with a batch processor and the
OTLP/HTTP exporter, and the standard instrumentations: Flask (server spans named by route), WSGI
(the relay ingress, answered in front of Flask), SQLAlchemy (a span per statement), urllib3 and
requests (client spans, and W3C `traceparent` on every outbound request).

`SafeHttpClient` (registry.outbound) speaks urllib3 directly, so it is the urllib3 instrumentation
that traces the crawler, the probes, JWKS fetches and relay deliveries; requests' covers what uses
requests. The batch processor, sampler, exporter headers and timeouts read the standard OTEL_*
variables themselves (OTEL_BSP_*, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, ...);
OTEL_SERVICE_NAME names the service (default `agentdex`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from flask import Flask
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from opentelemetry.instrumentation.urllib3 import RequestInfo, URLLib3Instrumentor
from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from sqlalchemy import Engine

from registry.observability.idle_runs import IdleRunFilter
from registry.observability.request_ids import ENVIRON_KEY
from registry.observability.tracing import WsgiApp

SERVICE = "agentdex"
TRACER = "agentdex"
URL_ATTRIBUTES = ("http.url", "url.full")  # the older and the current semantic conventions
TRACES_PATH = "/v1/traces"  # appended to OTEL_EXPORTER_OTLP_ENDPOINT, as the OTLP exporter spec says


class OtelTracing:
    """Tracing on: the process's tracer provider and instrumentations (see the module's docstring)."""

    def __init__(self, provider: TracerProvider) -> None:
        self._tracer = provider.get_tracer(TRACER)
        self._engines_lock = threading.Lock()
        self._engines_traced = False

    @classmethod
    def start(cls, endpoint: str) -> OtelTracing:
        provider = TracerProvider(resource=_resource())
        exporting = BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(endpoint)))
        provider.add_span_processor(IdleRunFilter(exporting))
        trace.set_tracer_provider(provider)
        RequestsInstrumentor().instrument(tracer_provider=provider)
        URLLib3Instrumentor().instrument(
            tracer_provider=provider, request_hook=_name_the_host, url_filter=_without_query
        )
        return cls(provider)

    def instrument_app(self, app: Flask) -> None:
        FlaskInstrumentor().instrument_app(app, request_hook=_tag_request_id)

    def instrument_engines(self, engines: Sequence[Engine]) -> None:
        # The instrumentor is a process-wide singleton that instruments once: the engines of the
        # process's services (one set per process: `agentdex serve`, `worker`, a web process).
        with self._engines_lock:
            if not self._engines_traced:
                # Its declared range stops below SQLAlchemy 2.1, whose engine events (all it listens
                # to) are those of 2.0; tests/registry/observability/test_traces.py shows the spans.
                SQLAlchemyInstrumentor().instrument(engines=list(engines), skip_dep_check=True)
                self._engines_traced = True

    def server_spans(self, wsgi_app: WsgiApp, route: str) -> WsgiApp:
        def name_by_route(span: Any, environ: dict[str, Any]) -> None:
            span.update_name(f"{environ.get('REQUEST_METHOD', 'POST')} {route}")
            span.set_attribute("http.route", route)
            _tag_request_id(span, environ)

        return OpenTelemetryMiddleware(wsgi_app, request_hook=name_by_route)

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
        with self._tracer.start_as_current_span(name, attributes=dict(attributes)) as span:
            yield span


def traces_url(endpoint: str) -> str:
    return endpoint.rstrip("/") + TRACES_PATH


def _resource() -> Resource:
    """The SDK's resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), named `agentdex` unless
    the operator named it."""
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: SERVICE}))
    return resource


def _tag_request_id(span: Any, environ: dict[str, Any]) -> None:
    request_id = environ.get(ENVIRON_KEY)
    if request_id and span.is_recording():
        span.set_attribute("agentdex.request_id", request_id)


def _name_the_host(span: Any, pool: Any, request: RequestInfo) -> None:
    """SafeHttpClient connects to the address it checked (its pools are keyed by IP), so the
    instrumentation's URL names the IP; the name the request was for is in its Host header."""
    host = (request.headers or {}).get("Host")
    if not host or not span.is_recording():
        return
    parts = urlsplit(request.url)
    named = urlunsplit((parts.scheme, host, parts.path, "", ""))
    for key in URL_ATTRIBUTES:
        if key in span.attributes:
            span.set_attribute(key, named)
    span.set_attribute("server.address", urlsplit(f"//{host}").hostname or host)
    span.set_attribute("network.peer.address", str(pool.host))


def _without_query(url: str) -> str:
    """A webhook's query string may hold a credential: spans never carry one."""
    return url.split("?", 1)[0]
