"""Facets (`CatalogSearch.facets`, ARD's explore): how many of a query's matching agents carry each
value of a kind, over a filtered set, over a text query's matches, with a limit, a minimum count and
the pairs left out; deprecated and dead agents counted only when the query asks for them; many
matches counted from the catalog's indexes and kept until the catalog changes."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import update

from registry.catalog import Agent, AgentQuery, Facet
from registry.catalog.any_of import KINDS
from registry.catalog.facets import FacetCounter
from registry.errors import InvalidRequest
from tests.registry.catalog.varied_catalog import DEAD, DEPRECATED, register_varied

# What the default search finds (six agents: neither the deprecated one nor the dead one).
LISTED_FACETS = {
    "tag": Facet([("weather", 3), ("blue", 2), ("maps", 2), ("red", 2), ("green", 1), ("travel", 1)], 0),
    "host": Facet(
        [
            ("alpha.example.com", 2),
            ("2001:db8::1", 1),
            ("beta.example.com", 1),
            ("epsilon.example.net", 1),
            ("legacy.example.org", 1),
        ],
        0,
    ),
    "input": Facet([("text/plain", 5), ("image/png", 1)], 0),
    "output": Facet([("text/plain", 6), ("application/json", 5)], 0),
    "cap": Facet([("streaming", 2), ("pushNotifications", 1)], 0),
    "proto": Facet([("1.0", 5), ("0.3", 1), ("0.3.0", 1)], 0),  # a version and its major.minor
    "sig": Facet([("unsigned", 6)], 0),
    "health": Facet([("unknown", 2), ("up", 2), ("degraded", 1), ("down", 1)], 0),  # down, not yet dead
    "status": Facet([("active", 6)], 0),
}


@pytest.fixture
def ids(services, actor) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return register_varied(services, actor)


def test_facets_count_what_the_default_search_finds(services, ids):
    assert services.search.facets(AgentQuery(), KINDS) == LISTED_FACETS


def test_deprecated_and_dead_agents_are_counted_when_the_query_includes_them(services, ids):
    every = services.search.facets(AgentQuery(status="any", include_dead=True), ["tag", "status", "health"])
    assert every["tag"].buckets[:3] == [("weather", 4), ("red", 3), ("blue", 2)]  # Eta: weather; Zeta: red
    assert every["status"] == Facet([("active", 7), ("deprecated", 1)], 0)
    assert every["health"] == Facet([("up", 3), ("down", 2), ("unknown", 2), ("degraded", 1)], 0)
    deprecated = services.search.facets(AgentQuery(status="deprecated"), ["host", "tag"])
    assert deprecated == {"host": Facet([("zeta.example.net", 1)], 0), "tag": Facet([("red", 1), ("travel", 1)], 0)}


def test_a_limit_and_a_minimum_count_leave_the_rest_to_other_count(services, ids):
    """`other_count`: the (agent, value) pairs in no bucket, so that the buckets and it add up to
    every value carried by every match (11 tags on the six agents)."""
    assert services.search.facets(AgentQuery(), ["tag"], limit=2)["tag"] == Facet([("weather", 3), ("blue", 2)], 6)
    at_least_two = services.search.facets(AgentQuery(), ["tag", "host"], min_count=2)
    assert at_least_two["tag"] == Facet([("weather", 3), ("blue", 2), ("maps", 2), ("red", 2)], 2)
    assert at_least_two["host"] == Facet([("alpha.example.com", 2)], 4)
    assert services.search.facets(AgentQuery(), ["sig"], min_count=7)["sig"] == Facet([], 6)


def test_facets_of_a_filtered_set(services, ids):
    red_or_blue = AgentQuery(any_of=(("tag", ("red", "blue")),))
    facets = services.search.facets(red_or_blue, ["host", "tag", "cap"], limit=3)
    assert facets["host"] == Facet([("alpha.example.com", 2), ("2001:db8::1", 1), ("beta.example.com", 1)], 0)
    assert facets["tag"] == Facet([("blue", 2), ("maps", 2), ("red", 2)], 2)  # and weather, on Alpha and Beta
    assert facets["cap"] == Facet([("pushNotifications", 1), ("streaming", 1)], 0)
    weather = services.search.facets(AgentQuery(tags=("weather",), health="unknown"), ["proto", "health"])
    assert weather == {"proto": Facet([("0.3", 1), ("0.3.0", 1)], 0), "health": Facet([("unknown", 1)], 0)}


def test_facets_of_a_text_querys_matches(services, ids):
    maps = services.search.facets(AgentQuery(text="maps", ranking="lexical"), ["tag", "host"])
    assert maps["tag"] == Facet([("maps", 2), ("blue", 1), ("red", 1)], 0)
    assert maps["host"] == Facet([("2001:db8::1", 1), ("alpha.example.com", 1)], 0)
    # The query's filters narrow its matches; its cursor and page size do not.
    paged = AgentQuery(text="weather travel", ranking="lexical", any_of=(("health", ("up",)),), limit=1)
    assert services.search.facets(paged, ["tag"])["tag"] == Facet(
        [("green", 1), ("red", 1), ("travel", 1), ("weather", 1)], 0
    )  # Alpha and Epsilon; not Zeta (deprecated), not Eta (dead)


def test_queries_that_can_match_nothing_count_nothing(services, ids):
    never = AgentQuery(health="up", any_of=(("health", ("down",)),))
    assert services.search.facets(never, ["tag", "health"]) == {"tag": Facet([], 0), "health": Facet([], 0)}
    assert services.search.facets(AgentQuery(text="zeppelin", ranking="lexical"), ["tag"]) == {"tag": Facet([], 0)}


@pytest.mark.parametrize(
    "kinds,limit,min_count,message",
    [
        (["tag", "colour"], 20, 1, "no facet of kind 'colour'"),
        (["tag"], 0, 1, "limit is 1 to 1000"),
        (["tag"], 1001, 1, "limit is 1 to 1000"),
        (["tag"], 20, -1, "minimum count is 0 or more"),
    ],
)
def test_bad_facet_requests_are_refused_clearly(services, kinds, limit, min_count, message):
    with pytest.raises(InvalidRequest, match=message):
        services.search.facets(AgentQuery(), kinds, limit, min_count)


QUERIES = [
    AgentQuery(),
    AgentQuery(status="any"),
    AgentQuery(status="any", include_dead=True),
    AgentQuery(status="deprecated"),
    AgentQuery(include_dead=True),
    AgentQuery(tags=("weather",)),
    AgentQuery(any_of=(("host", ("alpha.example.com", "eta.example.com")), ("health", ("up", "down")))),
    AgentQuery(status="any", any_of=(("tag", ("travel", "green")),)),
]


@pytest.mark.parametrize("query", QUERIES)
def test_many_matches_are_counted_from_the_indexes_alike(services, ids, query):
    """Past a number of matches (here: none) a facet is counted over the catalog's indexes, the
    agents left out by default subtracted from the whole catalog's counts: the same facets."""
    wide = FacetCounter(services.search._store, live_matches=0)
    filters = services.search._filters(query)
    assert wide.of(filters, KINDS, 3, 1) == services.search.facets(query, KINDS, 3, 1)


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_facets_of_many_matches_are_kept_until_the_catalog_changes(services, actor, ids):
    """A write to the catalog (here a deprecation) is counted at once; a health state, which
    changes without one, after at most the seconds a facet is kept."""
    clock = Monotonic()
    wide = FacetCounter(services.search._store, monotonic=clock, kept_seconds=30, live_matches=0)
    filters = services.search._filters(AgentQuery())

    def weather() -> int:
        return dict(wide.of(filters, ["tag"], 20, 1)["tag"].buckets)["weather"]

    assert weather() == 3
    services.catalog.update_status(actor, ids["Beta Weather"], "deprecated", None)
    assert weather() == 2
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
    with services.engine.begin() as conn:  # Alpha has been down for a month: hidden as dead
        conn.execute(
            update(Agent).where(Agent.id == ids["Alpha Weather"]).values(health_state="down", health_since=long_ago)
        )
    assert weather() == 2  # kept
    clock.now += 31
    assert weather() == 1
    assert DEAD and DEPRECATED  # neither ever counted by default
