"""Term counts steer the search planner; an expired count is used while a background thread
counts again, so only a term this process has never seen is counted on a request."""

from __future__ import annotations

import itertools
import threading

from registry.catalog.search_plan import TermStats
from tests.support.cards import make_card
from tests.support.jobs import Ticker
from tests.support.waiting import wait_for

_numbers = itertools.count()


def _register(services, actor, n: int, tag: str) -> None:
    for i in itertools.islice(_numbers, n):
        services.catalog.register_card(actor, make_card(f"Agent {tag} {i}", tags=[tag]), f"https://{tag}{i}.example/c.json")


def test_a_new_term_is_counted_at_once_and_an_expired_one_in_the_background(services, actor):
    _register(services, actor, 3, "weather")
    clock = Ticker()
    stats = TermStats(ttl=60, monotonic=clock, sessions=services.sessions)
    with services.sessions() as session:
        assert stats.count(session, "tag", "weather") == 3
    _register(services, actor, 2, "weather")
    with services.sessions() as session:
        assert stats.count(session, "tag", "weather") == 3  # still fresh: cached
        clock.now += 61
        assert stats.count(session, "tag", "weather") == 3  # expired: the stale count, at once
    # ...while the background thread counted again
    assert wait_for(lambda: stats._cache[("tag", "weather")][1] == 5)
    with services.sessions() as session:
        assert stats.count(session, "tag", "weather") == 5


def test_without_sessions_an_expired_count_is_counted_on_the_request(services, actor):
    _register(services, actor, 2, "travel")
    clock = Ticker()
    stats = TermStats(ttl=60, monotonic=clock)
    with services.sessions() as session:
        assert stats.count(session, "tag", "travel") == 2
        _register(services, actor, 1, "travel")
        clock.now += 61
        assert stats.count(session, "tag", "travel") == 3


def test_refreshes_of_many_expired_terms_run_on_one_thread(services, actor):
    _register(services, actor, 1, "alpha")
    _register(services, actor, 1, "bravo")
    clock = Ticker()
    stats = TermStats(ttl=60, monotonic=clock, sessions=services.sessions)
    with services.sessions() as session:
        for tag in ("alpha", "bravo"):
            stats.count(session, "tag", tag)
        clock.now += 61
        before = threading.active_count()
        for tag in ("alpha", "bravo", "alpha", "bravo"):
            stats.count(session, "tag", tag)
        assert threading.active_count() <= before + 1
    assert wait_for(lambda: not stats._refreshing)
    assert all(stats._cache[("tag", t)][0] > clock.now for t in ("alpha", "bravo"))
