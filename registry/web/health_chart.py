"""The agent page's health chart: retained health checks drawn as an SVG on the server.

A pure function of the checks: no JavaScript, no chart library. Checks are grouped into at most
MAX_BARS time slots of equal length across the span they cover; each slot is one bar whose height
is the median latency of its answered checks and whose class is its worst outcome (a slot where
every check failed is drawn full height, a gap in the agent's life). Every bar carries a `<title>`
(a tooltip, and its accessible name), and the chart a summary in words beside it for those who do
not see it. Text in the SVG is escaped; everything else is numbers this module formats itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import statistics
from collections.abc import Sequence
from typing import Protocol

from markupsafe import Markup, escape

MAX_BARS = 120
WIDTH, HEIGHT = 720, 180
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 12, 28  # margins around the plot, room for the axis labels
ALIVE = ("up", "degraded")
SEVERITY = {"up": 0, "degraded": 1, "down": 2}
# Fallback fills for an SVG seen without the page's stylesheet (the stylesheet's classes win).
FILL = {"up": "#2e7d32", "degraded": "#b26a00", "down": "#c62828"}


class Check(Protocol):
    """One retained probe (`registry.health.CheckPoint`)."""

    @property
    def at(self) -> float: ...  # seconds since the epoch

    @property
    def outcome(self) -> str: ...

    @property
    def latency_ms(self) -> int | None: ...


@dataclasses.dataclass(frozen=True)
class Slot:
    """The checks of one bar's time slot (times in seconds since the epoch)."""

    start: float
    end: float
    outcomes: dict[str, int]
    median_ms: int | None

    @property
    def worst(self) -> str:
        worst = max(self.outcomes, key=lambda outcome: SEVERITY.get(outcome, 2))
        return worst if worst in SEVERITY else "down"

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())


@dataclasses.dataclass(frozen=True)
class HealthChart:
    """The chart (None without checks), its one-line summary, and the slots it drew."""

    svg: Markup | None
    summary: str
    slots: tuple[Slot, ...] = ()


def health_chart(checks: Sequence[Check]) -> HealthChart:
    """The chart of `checks`, in any order (checks at the same time keep their order)."""
    if not checks:
        return HealthChart(None, "No health checks are retained for this agent yet.")
    ordered = sorted(checks, key=lambda check: check.at)
    slots = _slots(ordered)
    summary = _summary(ordered)
    return HealthChart(_svg(slots, summary), summary, tuple(slots))


def _summary(checks: Sequence[Check]) -> str:
    """E.g. "up 97 % of 120 checks over 24 h (3 down); median 42 ms"; degraded counts as up."""
    alive = [check for check in checks if check.outcome in ALIVE]
    degraded = sum(1 for check in alive if check.outcome == "degraded")
    down = len(checks) - len(alive)
    text = f"up {round(100 * len(alive) / len(checks))} % of {len(checks)} check{'s' if len(checks) != 1 else ''}"
    text += f" over {_span(checks[-1].at - checks[0].at)}"
    details = [f"{count} {word}" for count, word in ((degraded, "degraded"), (down, "down")) if count]
    if details:
        text += f" ({', '.join(details)})"
    latencies = [check.latency_ms for check in alive if check.latency_ms is not None]
    if latencies:
        text += f"; median {round(statistics.median(latencies))} ms"
    return text


def _span(seconds: float) -> str:
    if seconds >= 2 * 3600:
        return f"{round(seconds / 3600)} h"
    if seconds >= 120:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds)} s"


def _slots(checks: Sequence[Check]) -> list[Slot]:
    """At most MAX_BARS slots of equal length over the checks' span; empty slots are left out."""
    first = checks[0].at
    count = min(MAX_BARS, len(checks))
    length = max((checks[-1].at - first) / count, 1e-6)
    grouped: dict[int, list[Check]] = {}
    for check in checks:
        grouped.setdefault(min(int((check.at - first) / length), count - 1), []).append(check)
    return [_slot(first + length * index, first + length * (index + 1), members) for index, members in grouped.items()]


def _slot(start: float, end: float, members: list[Check]) -> Slot:
    outcomes: dict[str, int] = {}
    for check in members:
        outcomes[check.outcome] = outcomes.get(check.outcome, 0) + 1
    latencies = [c.latency_ms for c in members if c.latency_ms is not None and c.outcome in ALIVE]
    return Slot(start, end, outcomes, round(statistics.median(latencies)) if latencies else None)


def _svg(slots: Sequence[Slot], summary: str) -> Markup:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top_ms = _nice_ceiling(max((s.median_ms or 0 for s in slots), default=0))
    first, last = slots[0].start, slots[-1].end
    span = max(last - first, 1e-6)
    bar_w = plot_w / max(len(slots), MAX_BARS // 4) * 0.8  # few bars stay slim
    parts = [
        f'<svg class="health-chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" preserveAspectRatio="xMinYMin meet" aria-label="{escape(summary)}">',
        f"<title>{escape(summary)}</title>",
        f'<rect class="hc-plot" x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none"/>',
        _axis_label(LEFT - 6, TOP + 10, f"{top_ms} ms", "end"),
        _axis_label(LEFT - 6, TOP + plot_h, "0 ms", "end"),
        _axis_label(LEFT, HEIGHT - 8, _clock(first), "start"),
        _axis_label(WIDTH - RIGHT, HEIGHT - 8, _clock(last), "end"),
    ]
    for slot in slots:
        x = LEFT + (slot.start - first) / span * (plot_w - bar_w)
        # Nothing answered: a full-height bar marks the gap.
        h = plot_h if slot.median_ms is None else max(plot_h * slot.median_ms / top_ms, 2.0)
        worst = slot.worst
        parts.append(
            f'<rect class="hc-bar hc-{worst}" data-outcome="{worst}" data-checks="{slot.total}" '
            f'x="{x:.1f}" y="{TOP + plot_h - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{FILL[worst]}">'
            f"<title>{escape(_slot_title(slot))}</title></rect>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _slot_title(slot: Slot) -> str:
    by_severity = sorted(slot.outcomes.items(), key=lambda item: SEVERITY.get(item[0], 3))
    counts = ", ".join(f"{n} {outcome}" for outcome, n in by_severity)
    latency = f"; median {slot.median_ms} ms" if slot.median_ms is not None else ""
    return f"{_clock(slot.start)}–{_clock(slot.end)} UTC: {counts}{latency}"


def _axis_label(x: float, y: float, text: str, anchor: str) -> str:
    return f'<text class="hc-label" x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}">{escape(text)}</text>'


def _clock(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%d %b %H:%M")


def _nice_ceiling(ms: int) -> int:
    """The latency axis' top: 1, 2 or 5 times a power of ten, at least 10 ms."""
    top = 10
    while top < ms:
        for factor in (2, 2.5, 2):
            top = int(top * factor)
            if top >= ms:
                break
    return top
