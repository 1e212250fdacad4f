"""Any-of groups (`AgentQuery.any_of`, what ARD's filters become): an agent matches a group when it
has one of its values; groups narrow each other and every other filter, with and without text,
page after page; a group of one value is the single filter of its kind."""

from __future__ import annotations

import dataclasses

import pytest

from registry.catalog import AgentQuery
from registry.errors import InvalidRequest
from tests.registry.catalog.varied_catalog import DEAD, DEPRECATED, LISTED, SPECS, every_page, register_varied


@pytest.fixture
def ids(services, actor) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return register_varied(services, actor)


def names(services, ids: dict[str, str], query: AgentQuery) -> list[str]:  # type: ignore[no-untyped-def]
    """Names of what the query finds, a page of one agent at a time (in registration order without
    text), and the same as one page."""
    by_id = {agent_id: name for name, agent_id in ids.items()}
    paged = [by_id[agent_id] for agent_id in every_page(services, dataclasses.replace(query, limit=1))]
    assert paged == [by_id[row.id] for row in services.search.search(dataclasses.replace(query, limit=50)).agents]
    return paged


@pytest.mark.parametrize(
    "groups,expected",
    [
        ((("host", ("alpha.example.com", "[2001:DB8::1]")),), ["Alpha Weather", "Gamma Maps", "Delta Maps"]),
        ((("host", ("LEGACY.example.org.", "nowhere.example")),), ["Legacy Weather"]),  # no port, any case
        ((("tag", ("Maps", " GREEN ")),), ["Gamma Maps", "Delta Maps", "Epsilon Travel"]),
        (
            (("tag", ("red", "blue")), ("host", ("alpha.example.com", "legacy.example.org"))),
            ["Alpha Weather", "Gamma Maps"],
        ),
        ((("cap", ("streaming", "pushNotifications")),), ["Alpha Weather", "Gamma Maps", "Legacy Weather"]),
        ((("proto", ("0.3", "2.0")),), ["Legacy Weather"]),
        ((("input", ("IMAGE/PNG", "audio/wav")),), ["Epsilon Travel"]),
        ((("output", ("application/json", "video/mp4")),), [n for n in LISTED if n != "Legacy Weather"]),
        ((("health", ("up", "degraded")),), ["Alpha Weather", "Beta Weather", "Epsilon Travel"]),
        ((("sig", ("unsigned", "verified")),), LISTED),
        (
            (("tag", ("weather", "maps")), ("health", ("down", "unknown"))),
            ["Gamma Maps", "Delta Maps", "Legacy Weather"],
        ),
    ],
)
def test_an_agent_matches_a_group_by_any_of_its_values_and_must_match_every_group(services, ids, groups, expected):
    assert names(services, ids, AgentQuery(any_of=groups)) == expected


def test_groups_narrow_every_other_filter(services, ids):
    tags = (("tag", ("red", "blue", "green")),)
    assert names(services, ids, AgentQuery(tags=("weather",), any_of=tags)) == ["Alpha Weather", "Beta Weather"]
    assert names(services, ids, AgentQuery(health="up", any_of=tags)) == ["Alpha Weather", "Epsilon Travel"]
    assert names(services, ids, AgentQuery(capabilities=("streaming",), any_of=tags)) == ["Alpha Weather"]
    # Dead agents stay hidden, deprecated ones too unless asked for.
    assert names(services, ids, AgentQuery(any_of=(("tag", ("travel", "weather")),))) == [
        "Alpha Weather",
        "Beta Weather",
        "Legacy Weather",
        "Epsilon Travel",
    ]
    with_all = AgentQuery(status="any", include_dead=True, any_of=(("tag", ("travel",)),))
    assert names(services, ids, with_all) == ["Epsilon Travel", DEPRECATED]


def test_a_status_group_chooses_among_the_statuses_the_query_allows(services, ids):
    both = (("status", ("active", "deprecated")),)
    assert names(services, ids, AgentQuery(status="any", include_dead=True, any_of=both)) == [s.name for s in SPECS]
    assert names(services, ids, AgentQuery(any_of=both)) == LISTED  # status=active (the default) still holds
    deprecated = AgentQuery(status="any", any_of=(("status", ("deprecated",)),))
    assert names(services, ids, deprecated) == [DEPRECATED]
    assert names(services, ids, AgentQuery(any_of=(("status", ("deprecated",)),))) == []  # active and deprecated


def test_filters_that_share_no_value_match_nothing(services, ids):
    assert names(services, ids, AgentQuery(health="up", any_of=(("health", ("down", "unknown")),))) == []
    twice = (("health", ("up", "down")), ("health", ("degraded", "unknown")))
    assert names(services, ids, AgentQuery(any_of=twice)) == []
    assert services.search.search(AgentQuery(text="weather", any_of=twice)).agents == []


@pytest.mark.parametrize("ranking", ["lexical", "fused"])
def test_groups_hold_for_a_text_query_page_after_page(services, ids, ranking):
    hosts = (("host", ("alpha.example.com", "beta.example.com", "legacy.example.org", "eta.example.com")),)
    query = AgentQuery(text="weather", ranking=ranking, any_of=hosts)
    found = names(services, ids, query)
    assert sorted(found) == ["Alpha Weather", "Beta Weather", "Legacy Weather"]  # Eta: hidden as dead
    query = AgentQuery(
        text="maps weather",
        ranking=ranking,
        any_of=(("tag", ("red", "blue")), ("cap", ("pushNotifications", "streaming"))),
    )
    assert sorted(names(services, ids, query)) == ["Alpha Weather", "Gamma Maps"]


def _plan(services, query: AgentQuery):  # type: ignore[no-untyped-def]
    """The shape and parameters of the query's first page statement."""
    store = services.search._store
    filters = services.search._filters(query)
    with store.engine.connect() as conn:
        counts = {term: store._stats.count(conn, *term) for term in filters.counted_terms()}
    shape, params = store._search.plan(filters, counts)
    return shape, {name: value for name, value in params.items() if name != "cutoff"}  # the clock's


@pytest.mark.parametrize(
    "group,single",
    [
        (("tag", (" Weather ",)), AgentQuery(tags=("weather",))),
        (("host", ("Alpha.Example.com",)), None),
        (("input", ("Text/Plain",)), AgentQuery(input_mode="text/plain")),
        (("output", ("application/json",)), AgentQuery(output_mode="application/json")),
        (("cap", ("streaming",)), AgentQuery(capabilities=("streaming",))),
        (("proto", (" 0.3 ",)), AgentQuery(protocol_version="0.3")),
        (("sig", ("unsigned",)), AgentQuery(signature="unsigned")),
        (("health", ("up",)), AgentQuery(health="up")),
        (("status", ("deprecated",)), AgentQuery(status="deprecated")),
    ],
)
def test_a_group_of_one_value_is_the_single_filter_of_its_kind(services, ids, group, single):
    grouped = AgentQuery(any_of=(group,), status="any" if group[0] == "status" else "active")
    if single is None:
        assert _plan(services, grouped)[1]["dv"] == "alpha.example.com"  # a required term, as any other
        return
    assert _plan(services, grouped) == _plan(services, single)
    assert names(services, ids, grouped) == names(services, ids, single)


def test_the_group_holding_fewest_agents_drives_the_search(services, ids):
    hosts = ("host", ("alpha.example.com", "beta.example.com"))
    shape, params = _plan(services, AgentQuery(tags=("weather",), any_of=(hosts, ("tag", ("red", "blue", "green")))))
    assert (shape.driver, shape.any_ranges, shape.term_probes, shape.group_probes) == ("any", 2, 1, 1)
    assert (params["ak0"], params["a0"], params["gk0"]) == ("host", "alpha.example.com", "tag")
    # A group that a required term satisfies is no filter at all.
    shape, _ = _plan(services, AgentQuery(tags=("red",), any_of=(("tag", ("red", "blue")),)))
    assert (shape.driver, shape.group_probes) == ("term", 0)


@pytest.mark.parametrize(
    "any_of,message",
    [
        ((("colour", ("red",)),), "no filter of kind 'colour'"),
        ((("tag", ()),), "needs at least one value"),
        ((("health", ("alive",)),), "not 'alive'"),
        ((("status", ("deleted",)),), "not 'deleted'"),
        ((("tag", "red"),), "are a list of strings"),
        ((("tag", ("red", 7)),), "are a list of strings"),
        (tuple(("tag", (f"t{n}",)) for n in range(9)), "at most 8 any-of groups"),
        ((("tag", tuple(f"t{n}" for n in range(33))),), "at most 32 values"),
        (tuple(("tag", tuple(f"t{g}-{n}" for n in range(20))) for g in range(4)), "at most 64 any-of values"),
    ],
)
def test_groups_out_of_bounds_are_refused_clearly(services, any_of, message):
    for query in (AgentQuery(any_of=any_of), AgentQuery(text="weather", any_of=any_of)):
        with pytest.raises(InvalidRequest, match=message):
            services.search.search(query)


def test_dead_agents_are_found_by_a_group_only_when_asked_for(services, ids):
    hosts = (("host", ("eta.example.com", "alpha.example.com")),)
    assert names(services, ids, AgentQuery(any_of=hosts)) == ["Alpha Weather", "Gamma Maps"]
    assert names(services, ids, AgentQuery(any_of=hosts, include_dead=True)) == ["Alpha Weather", "Gamma Maps", DEAD]
