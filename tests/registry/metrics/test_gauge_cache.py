"""Scrape-time gauges: computed by every scrape while cheap; once expensive, answered from the last
figures and refreshed in the background when they are older than the limit."""

from __future__ import annotations

from registry.metrics import GaugeFamily
from registry.metrics.gauge_cache import RefreshedGauges


class Source:
    """A gauge source whose computation takes `cost` seconds on the test's clock."""

    def __init__(self, clock: list[float], cost: float) -> None:
        self.clock, self.cost, self.calls = clock, cost, 0

    def __call__(self) -> list[GaugeFamily]:
        self.calls += 1
        self.clock[0] += self.cost
        return [GaugeFamily("agentdex_things", "Things", (), {(): float(self.calls)})]


def figure(families: list[GaugeFamily]) -> float:
    return families[0].samples[()]


def test_a_cheap_source_is_computed_by_every_scrape():
    clock = [0.0]
    source = Source(clock, cost=0.001)
    gauges = RefreshedGauges(source, monotonic=lambda: clock[0])
    assert [figure(gauges()) for _ in range(3)] == [1, 2, 3]


def test_an_expensive_source_answers_from_its_last_figures_and_refreshes_them_in_the_background():
    clock = [0.0]
    source = Source(clock, cost=0.5)
    gauges = RefreshedGauges(source, max_age=15.0, monotonic=lambda: clock[0])
    assert figure(gauges()) == 1  # the first scrape has nothing else to answer with
    clock[0] += 10
    assert figure(gauges()) == 1 and source.calls == 1  # fresh enough: no query
    clock[0] += 10
    assert figure(gauges()) == 1  # stale: answered at once, a refresh started
    gauges.wait_for_refresh()
    assert source.calls == 2 and figure(gauges()) == 2
