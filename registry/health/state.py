"""From probe results to an agent's health: one round's outcome, Consul-style thresholds,
back-off for agents that stay down, and the 24-hour uptime window. Pure functions of their input.

Thresholds work as Consul's `success_before_passing` / `failures_before_critical`: the state only
changes after `failures_before_down` failed rounds in a row (to `down`) or `successes_before_up`
answered rounds in a row (to `up`, or `degraded` when the last round was degraded). A new agent
starts `unknown` and leaves it by the same rule.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections.abc import Sequence

from registry.health.probe import ProbeResult

SEVERITY = {"up": 0, "degraded": 1, "down": 2}
WINDOW_HOURS = 24


@dataclasses.dataclass(frozen=True)
class HealthPolicy:
    interval: float = 60.0
    failures_before_down: int = 2
    successes_before_up: int = 1
    max_backoff: float = 3600.0
    jitter: float = 0.1


@dataclasses.dataclass(frozen=True)
class RoundOutcome:
    """What one round (every JSON-RPC interface probed once) says about the agent."""

    outcome: str
    reason: str
    latency_ms: int | None


@dataclasses.dataclass(frozen=True)
class Health:
    """The rolled-up health columns of an agent."""

    state: str = "unknown"
    since: dt.datetime | None = None
    successes: int = 0
    failures: int = 0
    window: tuple[tuple[int, int, int], ...] = ()


def round_outcome(results: Sequence[ProbeResult]) -> RoundOutcome:
    """All interfaces up: up. All down: down. A mix: degraded, with the worst interface's reason."""
    worst = max(results, key=lambda r: SEVERITY[r.outcome])
    latencies = [r.latency_ms for r in results if r.latency_ms is not None]
    latency = max(latencies) if latencies else None
    outcomes = {r.outcome for r in results}
    if outcomes == {"down"} or worst.outcome != "down":
        return RoundOutcome(worst.outcome, worst.reason, latency)
    return RoundOutcome("degraded", "interfaceDown", latency)


def next_health(previous: Health, result: RoundOutcome, now: dt.datetime, policy: HealthPolicy) -> Health:
    """Apply one round to the roll-up."""
    alive = result.outcome != "down"
    successes = previous.successes + 1 if alive else 0
    failures = 0 if alive else previous.failures + 1
    state = previous.state
    if alive and successes >= policy.successes_before_up:
        state = result.outcome
    elif not alive and failures >= policy.failures_before_down:
        state = "down"
    since = previous.since if state == previous.state and previous.since else now
    return Health(state, since, successes, failures, add_to_window(previous.window, now, alive))


def next_probe_delay(health: Health, policy: HealthPolicy, rng: random.Random) -> float:
    """Seconds to the next probe: the interval, doubled per failed round past the threshold while
    the agent stays down (capped), with jitter so that agents registered together spread out."""
    delay = policy.interval
    if health.state == "down":
        extra = max(0, health.failures - policy.failures_before_down)
        delay = min(policy.interval * 2 ** min(extra, 30), policy.max_backoff)
    return jittered(delay, policy.jitter, rng)


def jittered(seconds: float, fraction: float, rng: random.Random) -> float:
    return seconds * (1 + rng.uniform(-fraction, fraction))


def add_to_window(window: Sequence[Sequence[int]], now: dt.datetime, alive: bool) -> tuple[tuple[int, int, int], ...]:
    """Count one round in its hour; drop hours older than the window."""
    hour = _hour(now)
    kept = [(h, a, t) for h, a, t in window if hour - WINDOW_HOURS < h <= hour]
    if kept and kept[-1][0] == hour:
        h, a, t = kept.pop()
        kept.append((h, a + int(alive), t + 1))
    else:
        kept.append((hour, int(alive), 1))
    return tuple(kept)


def uptime(window: Sequence[Sequence[int]], now: dt.datetime) -> float | None:
    """Share of rounds in the last 24 hours in which the agent answered; None without rounds."""
    hour = _hour(now)
    recent = [(a, t) for h, a, t in window if hour - WINDOW_HOURS < h <= hour]
    total = sum(t for _, t in recent)
    return round(sum(a for a, _ in recent) / total, 4) if total else None


def _hour(moment: dt.datetime) -> int:
    return int(moment.timestamp() // 3600)
