"""The health chart: a pure function from retained checks to an SVG and a summary in words."""

from __future__ import annotations

import dataclasses
import datetime as dt
import xml.etree.ElementTree as ET

from registry.web.health_chart import MAX_BARS, health_chart

START = dt.datetime(2026, 11, 22, 0, 0, tzinfo=dt.UTC)
SVG = "{http://www.w3.org/2000/svg}"


@dataclasses.dataclass(frozen=True)
class Check:
    at: float
    outcome: str
    latency_ms: int | None


def series(outcomes: str, every: dt.timedelta = dt.timedelta(minutes=12), latency: int = 40) -> list[Check]:
    """One check per letter: u(p), d(egraded), x (down, no latency)."""
    names = {"u": "up", "d": "degraded", "x": "down"}
    return [
        Check((START + every * i).timestamp(), names[o], None if o == "x" else latency + i % 5)
        for i, o in enumerate(outcomes)
    ]


def bars(svg: str) -> list[ET.Element]:
    root = ET.fromstring(str(svg).replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))  # well-formed XML
    return [rect for rect in root.iter(f"{SVG}rect") if "hc-bar" in (rect.get("class") or "")]


def test_each_check_is_a_bar_coloured_by_its_outcome() -> None:
    chart = health_chart(series("uuxud"))
    assert chart.svg is not None
    drawn = bars(chart.svg)
    assert [bar.get("data-outcome") for bar in drawn] == ["up", "up", "down", "up", "degraded"]
    down = drawn[2]
    plot_height = max(float(bar.get("height") or 0) for bar in drawn)
    assert float(down.get("height") or 0) == plot_height  # a failed slot is drawn full height: a gap
    assert all(float(bar.get("height") or 0) < plot_height for bar in drawn if bar is not down)
    xs = [float(bar.get("x") or 0) for bar in drawn]
    assert xs == sorted(xs)  # in time order


def test_the_summary_says_uptime_checks_span_and_median_latency() -> None:
    checks = series("u" * 116 + "xxxx", every=dt.timedelta(minutes=12))  # 120 checks over 23.8 h
    chart = health_chart(list(reversed(checks)))  # any order
    assert chart.summary == "up 97 % of 120 checks over 24 h (4 down); median 42 ms"
    assert chart.svg is not None and f'aria-label="{chart.summary}"' in chart.svg
    assert f"<title>{chart.summary}</title>" in chart.svg


def test_many_checks_are_grouped_into_slots_with_their_worst_outcome() -> None:
    checks = series("u" * 990 + "x" * 10, every=dt.timedelta(seconds=60))
    chart = health_chart(checks)
    assert chart.svg is not None
    drawn = bars(chart.svg)
    assert len(drawn) == MAX_BARS
    assert sum(int(bar.get("data-checks") or 0) for bar in drawn) == 1000
    assert [bar.get("data-outcome") for bar in drawn][-2:] == ["down", "down"] and drawn[0].get("data-outcome") == "up"
    assert sum(1 for bar in drawn if bar.get("data-outcome") == "down") == 2  # 10 failures span two slots


def test_no_checks_no_chart() -> None:
    chart = health_chart([])
    assert chart.svg is None and chart.summary == "No health checks are retained for this agent yet."


def test_a_single_check_draws_one_bar() -> None:
    chart = health_chart(series("u"))
    assert chart.summary == "up 100 % of 1 check over 0 s; median 40 ms"
    assert chart.svg is not None and len(bars(chart.svg)) == 1
