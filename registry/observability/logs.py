"""Logging for the long-running processes (`agentdex serve`, `agentdex worker`, a WSGI server's
web processes), configured here and nowhere else.

`text` (the default) is for a terminal; `json` (AGENTDEX_LOG_FORMAT=json) writes one JSON object
per line for a log pipeline: time, level, logger, message, and when known the request id, the
trace and span ids, and the exception's text."""

from __future__ import annotations

import datetime as dt
import logging
import sys
from typing import IO, Any

from registry import jsontext
from registry.observability.request_ids import current_request_id

# APScheduler logs every tick and Alembic every plugin at INFO; operators need neither.
QUIET_LOGGERS = ("apscheduler", "alembic")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_format: str = "text", *, stream: IO[str] | None = None, level: int = logging.INFO) -> None:
    """Send every record at `level` and above to `stream` (stderr) in `log_format` (text | json),
    replacing the root logger's handlers (calling it again reconfigures, never duplicates)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter() if log_format == "json" else TextLogFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


class TextLogFormatter(logging.Formatter):
    """The classic line, ending with the request's id when it was written while serving one."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = current_request_id()
        if request_id is None:
            return line
        first, newline, rest = line.partition("\n")  # after the message, before a traceback
        return f"{first} [request {request_id}]{newline}{rest}"


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line (a traceback is a field, never lines of its own)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = current_request_id()
        if request_id is not None:
            entry["request_id"] = request_id
        entry |= current_trace_ids()
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return jsontext.dumps(entry, default=str).decode("utf-8")


def current_trace_ids() -> dict[str, str]:
    """`trace_id` and `span_id` of the span this thread is in, as W3C writes them; nothing when
    there is none. OpenTelemetry is looked up, never imported: with tracing off it is not loaded,
    and then no span can be current."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}
