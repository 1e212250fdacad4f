"""AGENTDEX_LOG_FORMAT: one JSON object per line (with the request's id and the exception), or the
classic text line, which names the request too."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from registry.observability import configure_logging


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """The root logger configured for the test, and put back as pytest had it afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stream = io.StringIO()
    yield stream
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


@pytest.fixture
def failing_app(app):  # type: ignore[no-untyped-def]
    """The app, with one view that fails as a bug would (the error handler logs it)."""

    def boom() -> str:
        raise RuntimeError("the disk is on fire")

    app.add_url_rule("/boom", "boom", boom)
    return app


def _lines(stream: io.StringIO) -> list[str]:
    return [line for line in stream.getvalue().splitlines() if line]


def test_json_lines_carry_the_request_id_and_the_exception(failing_app, logged):  # type: ignore[no-untyped-def]
    configure_logging("json", stream=logged)
    answered = failing_app.test_client().get("/boom", headers={"X-Request-Id": "req-123"})
    assert answered.status_code == 500
    assert answered.headers["X-Request-Id"] == "req-123"
    entries = [json.loads(line) for line in _lines(logged)]  # every line is one JSON object
    (error,) = [entry for entry in entries if entry["level"] == "ERROR"]
    assert error["request_id"] == "req-123"
    assert error["logger"] == "registry.api.errors"
    assert "RuntimeError: the disk is on fire" in error["exception"]
    assert error["time"].endswith("Z")
    assert "trace_id" not in error  # tracing is off


def test_json_lines_outside_a_request_have_no_request_id(logged):  # type: ignore[no-untyped-def]
    configure_logging("json", stream=logged)
    logging.getLogger("registry.jobs.worker").warning("probe of %s took %.1f s", "agent-1", 2.5)
    (entry,) = [json.loads(line) for line in _lines(logged)]
    assert entry["message"] == "probe of agent-1 took 2.5 s"
    assert entry["level"] == "WARNING"
    assert set(entry) == {"time", "level", "logger", "message"}


def test_text_lines_name_the_request(failing_app, logged):  # type: ignore[no-untyped-def]
    configure_logging("text", stream=logged)
    failing_app.test_client().get("/boom", headers={"X-Request-Id": "req-456"})
    lines = _lines(logged)
    assert any("ERROR registry.api.errors: unhandled error [request req-456]" in line for line in lines)
    assert any("RuntimeError: the disk is on fire" in line for line in lines)  # the traceback follows


def test_configuring_again_replaces_rather_than_duplicates(logged):  # type: ignore[no-untyped-def]
    configure_logging("text", stream=logged)
    configure_logging("json", stream=logged)
    logging.getLogger("agentdex.test").info("once")
    assert len(_lines(logged)) == 1
    assert logging.getLogger("apscheduler").level == logging.WARNING


def test_json_lines_carry_the_current_trace_and_span(logged):  # type: ignore[no-untyped-def]
    """With tracing on, the span a line is written in (here one made by hand with the API)."""
    from opentelemetry import trace

    context = trace.SpanContext(trace_id=0xABC, span_id=0xDEF, is_remote=False, trace_flags=trace.TraceFlags(1))
    configure_logging("json", stream=logged)
    with trace.use_span(trace.NonRecordingSpan(context)):
        logging.getLogger("registry.relay").info("delivered")
    (entry,) = [json.loads(line) for line in _lines(logged)]
    assert entry["trace_id"] == f"{0xABC:032x}" and entry["span_id"] == f"{0xDEF:016x}"
