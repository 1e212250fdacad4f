"""Job runs that found nothing to do are not exported. The scheduler ticks every job every second
or so; a trace per idle tick (its span and its claim statement) would bury the runs that did work
in a trace store, and cost its owner, for nothing.

A run's span starts a trace of its own (scheduler threads carry no context), so the spans of a
trace that a run opened are held until the run ends: exported with it when it claimed, recorded
or failed anything, dropped with it otherwise. A run that goes on making spans past `HOLD_MAX` is
no idle run: what it held is exported, and the rest as it comes."""

from __future__ import annotations

import threading
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

RUN_ATTRIBUTE = "agentdex.job"  # set on a run's span when it starts (`registry.observability.job_span`)
WORK_ATTRIBUTES = ("agentdex.job.claimed", "agentdex.job.recorded", "agentdex.job.failed")
HOLD_MAX = 256


class IdleRunFilter(SpanProcessor):
    """In front of the exporting processor (`then`)."""

    def __init__(self, then: SpanProcessor) -> None:
        self._then = then
        self._lock = threading.Lock()
        self._held: dict[int, list[ReadableSpan] | None] = {}  # trace id → spans held (None: passing)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if span.parent is None and span.attributes and RUN_ATTRIBUTE in span.attributes:
            with self._lock:
                self._held[span.context.trace_id] = []
        self._then.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        trace_id = span.context.trace_id if span.context else 0
        with self._lock:
            held = self._held.get(trace_id, None)
            if trace_id not in self._held:
                passing: list[ReadableSpan] = [span]
            elif span.parent is None:  # the run itself: the trace is complete
                del self._held[trace_id]
                passing = [*(held or []), span] if held is None or _did_work(span) else []
            elif held is not None and len(held) < HOLD_MAX:
                held.append(span)
                passing = []
            else:
                self._held[trace_id] = None
                passing = [*(held or []), span]
        for finished in passing:
            self._then.on_end(finished)

    def shutdown(self) -> None:
        self._then.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._then.force_flush(timeout_millis)


def _did_work(run: ReadableSpan) -> bool:
    """Whether the run claimed, recorded or failed anything, or raised (a database outage)."""
    attributes: Any = run.attributes or {}
    return run.status.status_code is StatusCode.ERROR or any(attributes.get(name) for name in WORK_ATTRIBUTES)
