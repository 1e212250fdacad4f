"""Health roll-up: one round's outcome, Consul-style thresholds, back-off, the uptime window."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from registry.health.probe import ProbeResult, ProbeTarget
from registry.health.state import (
    Health,
    HealthPolicy,
    RoundOutcome,
    add_to_window,
    next_health,
    next_probe_delay,
    round_outcome,
    uptime,
)
from tests.support.jobs import START

POLICY = HealthPolicy(interval=60, failures_before_down=2, successes_before_up=1, max_backoff=600, jitter=0)
UP = RoundOutcome("up", "ok", 10)
DOWN = RoundOutcome("down", "timeout", None)
SLOW = RoundOutcome("degraded", "slow", 3000)


def _result(outcome: str, reason: str, latency: int | None = 5) -> ProbeResult:
    return ProbeResult(ProbeTarget("https://a.example/rpc", "1.0"), START, outcome, reason, latency)


def _apply(rounds: list[RoundOutcome], policy: HealthPolicy = POLICY, health: Health | None = None) -> list[Health]:
    states, health, now = [], health or Health(), START
    for result in rounds:
        now += dt.timedelta(minutes=1)
        health = next_health(health, result, now, policy)
        states.append(health)
    return states


def test_a_new_agent_is_up_after_one_answer_and_down_after_two_failures():
    assert [h.state for h in _apply([UP])] == ["up"]
    assert [h.state for h in _apply([DOWN, DOWN])] == ["unknown", "down"]


def test_one_failure_does_not_take_an_up_agent_down_and_one_answer_brings_it_back():
    states = _apply([UP, DOWN, UP, DOWN, DOWN, DOWN, UP])
    assert [h.state for h in states] == ["up", "up", "up", "up", "down", "down", "up"]
    assert [h.failures for h in states] == [0, 1, 0, 1, 2, 3, 0]


def test_successes_before_up_holds_a_down_agent_down():
    policy = HealthPolicy(interval=60, failures_before_down=1, successes_before_up=3, jitter=0)
    assert [h.state for h in _apply([DOWN, UP, UP, UP], policy)] == ["down", "down", "down", "up"]


def test_since_moves_only_when_the_state_changes():
    states = _apply([UP, UP, SLOW, SLOW, DOWN, DOWN])
    assert [h.state for h in states] == ["up", "up", "degraded", "degraded", "degraded", "down"]
    assert states[0].since == states[1].since < states[2].since == states[3].since == states[4].since < states[5].since


def test_a_mix_of_live_and_dead_interfaces_is_degraded():
    assert round_outcome([_result("up", "ok", 5), _result("down", "timeout", None)]) == RoundOutcome(
        "degraded", "interfaceDown", 5
    )
    assert round_outcome([_result("up", "ok", 5), _result("degraded", "protocolMismatch", 9)]) == RoundOutcome(
        "degraded", "protocolMismatch", 9
    )
    assert round_outcome([_result("down", "timeout", None), _result("down", "serverError", 3)]).outcome == "down"
    assert round_outcome([_result("up", "authRequired", 4)]) == RoundOutcome("up", "authRequired", 4)


def test_agents_that_stay_down_are_probed_ever_less_often_up_to_the_cap():
    rng = random.Random(1)
    delays = [next_probe_delay(h, POLICY, rng) for h in _apply([DOWN] * 8)]
    assert delays == [60, 60, 120, 240, 480, 600, 600, 600]


def test_jitter_spreads_probes_within_ten_percent():
    policy = HealthPolicy(interval=60, jitter=0.1)
    delays = {next_probe_delay(Health("up"), policy, random.Random(seed)) for seed in range(50)}
    assert all(54 <= d <= 66 for d in delays) and len(delays) == 50


def test_uptime_is_the_share_of_answered_rounds_in_the_last_24_hours():
    window: tuple = ()
    now = START
    for minute in range(120):  # two hours: 90 answered rounds, 30 failed
        window = add_to_window(window, now + dt.timedelta(minutes=minute), alive=minute % 4 != 0)
    assert uptime(window, now + dt.timedelta(hours=2)) == pytest.approx(0.75)
    assert len(window) == 2
    assert uptime(window, now + dt.timedelta(hours=30)) is None  # everything has left the window
    later = add_to_window(window, now + dt.timedelta(hours=25), alive=True)
    assert [bucket[1:] for bucket in later] == [(1, 1)]
