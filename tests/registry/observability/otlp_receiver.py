"""A real OTLP/HTTP trace receiver on loopback: decodes each `ExportTraceServiceRequest` (protobuf,
as the SDK's exporter sends it) with `opentelemetry-proto` and keeps the spans."""

from __future__ import annotations

import dataclasses
import gzip
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.waiting import wait_for


@dataclasses.dataclass(frozen=True)
class Span:
    service: str
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int  # opentelemetry.proto.trace.v1.Span.SpanKind: 2 server, 3 client
    attributes: dict[str, Any]


class OtlpReceiver:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.paths: set[str] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver._take(self.path, ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def endpoint(self) -> str:
        """What OTEL_EXPORTER_OTLP_ENDPOINT should say (the exporter appends /v1/traces)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _take(self, path: str, request: ExportTraceServiceRequest) -> None:
        spans = []
        for resource_spans in request.resource_spans:
            resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {kv.key: _value(kv.value) for kv in span.attributes}
                    spans.append(
                        Span(
                            str(resource.get("service.name")),
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.name,
                            span.kind,
                            attributes,
                        )
                    )
        with self._lock:
            self.paths.add(path)
            self.spans.extend(spans)

    def snapshot(self) -> list[Span]:
        with self._lock:
            return list(self.spans)

    def wait_for(self, found: Callable[[list[Span]], Any], seconds: float = 20.0) -> Any:
        """What `found(spans)` returns once it is truthy; raises AssertionError after `seconds`."""
        result: list[Any] = []
        wait_for(lambda: bool(result.append(found(self.snapshot())) or result[-1]), seconds)
        assert result and result[-1], f"no such span among {[s.name for s in self.snapshot()]}"
        return result[-1]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None
