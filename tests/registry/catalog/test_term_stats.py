"""Term counts steer which index drives a search: counted once, kept for a while, counted again
when they have expired."""

from __future__ import annotations

import itertools

from registry.catalog.store_search import TermStats
from tests.support.cards import make_card
from tests.support.jobs import Ticker

_numbers = itertools.count()


def _register(services, actor, n: int, tag: str) -> None:  # type: ignore[no-untyped-def]
    for i in itertools.islice(_numbers, n):
        services.catalog.register_card(
            actor, make_card(f"Agent {tag} {i}", tags=[tag]), f"https://{tag}{i}.example/c.json"
        )


def test_a_count_is_kept_until_it_expires_then_counted_again(services, actor):  # type: ignore[no-untyped-def]
    _register(services, actor, 3, "weather")
    clock = Ticker()
    stats = TermStats(ttl=60, monotonic=clock)
    with services.engine.connect() as conn:
        assert stats.count(conn, "tag", "weather") == 3
        _register(services, actor, 2, "weather")
        clock.now += 59
        assert stats.count(conn, "tag", "weather") == 3  # still fresh
        clock.now += 2
        assert stats.count(conn, "tag", "weather") == 5
        assert stats.count(conn, "tag", "nowhere") == 0
