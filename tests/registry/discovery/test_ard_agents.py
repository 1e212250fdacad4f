"""`GET /ard/agents` (ARD v0.91 §5.3.4, Appendix A): the filter language read properly, the orders
the pages can keep, every agent once across pages, `total`; the rest a 400 that points at it."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import update

from registry.catalog import Agent
from registry.discovery.search.filter_syntax import check_order, parse_filter
from registry.discovery.search.request import InvalidArgument
from tests.registry.discovery.ard_agents import agent_card, refusal, register, set_state

AGENTS = [
    ("Weather Agent", ["weather"], "https://wx.example/a.json"),
    ("Storm, Inc. Watch", ["weather", "alerts"], "https://wx.example/b.json"),
    ("Tide Tables", ["sea"], "https://sea.example/.well-known/agent-card.json"),
    ("Invoice Reader", ["finance"], "https://books.example/c.json"),
]
JANUARY, MARCH = dt.datetime(2026, 1, 15, tzinfo=dt.UTC), dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


@pytest.fixture
def catalog(client, auth, services) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Agent ids by name; the first two created in January, the others in March."""
    ids = {}
    for n, (name, tags, url) in enumerate(AGENTS):
        ids[name] = register(client, auth, agent_card(name, f"{name} helps", name, tags), url)
        when = JANUARY if n < 2 else MARCH
        with services.engine.begin() as conn:
            conn.execute(update(Agent).where(Agent.id == ids[name]).values(created_at=when, updated_at=when))
    set_state(services, ids["Tide Tables"], health="up")
    set_state(services, ids["Weather Agent"], health="down")
    return ids


def listed(client, **params: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = client.get("/ard/agents?" + urlencode(params))
    assert response.status_code == 200, response.json
    return dict(response.json)


def names(client, **params: Any) -> list[str]:  # type: ignore[no-untyped-def]
    return [item["displayName"] for item in listed(client, **params)["items"]]


def test_every_agent_in_registration_order_with_the_total(client, catalog) -> None:  # type: ignore[no-untyped-def]
    body = listed(client)
    assert [item["displayName"] for item in body["items"]] == [name for name, _, _ in AGENTS]
    assert body["total"] == 4 and "pageToken" not in body
    item = body["items"][0]
    assert item["identifier"] == "urn:air:wx.example:a2a:a.json" and item["type"] == "application/a2a-agent-card+json"
    assert 2 <= len(item["representativeQueries"]) <= 5 and "score" not in item and "source" not in item


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            "type = 'application/a2a-agent-card+json'",
            ["Weather Agent", "Storm, Inc. Watch", "Tide Tables", "Invoice Reader"],
        ),
        ("type = application/mcp-server-card+json", []),
        (
            "type=application/mcp-server-card+json,application/a2a-agent-card+json AND publisherId=wx.example",
            ["Weather Agent", "Storm, Inc. Watch"],
        ),
        ("publisherId = sea.example,books.example", ["Tide Tables", "Invoice Reader"]),
        ("tags:weather AND tags:alerts", ["Storm, Inc. Watch"]),
        ("tags = sea OR tags = finance", ["Tide Tables", "Invoice Reader"]),
        ("(tags = sea OR tags = weather) AND health = up", ["Tide Tables"]),
        ("displayName = 'weather agent'", ["Weather Agent"]),
        ("displayName : 'INC. W'", ["Storm, Inc. Watch"]),
        ('displayName = "Storm, Inc. Watch"', ["Storm, Inc. Watch"]),
        ("createdAfter > '2026-02-01'", ["Tide Tables", "Invoice Reader"]),
        ("createdAfter = 2026-01-15T00:00:00Z", ["Tide Tables", "Invoice Reader"]),
        ("createdAt >= 2026-01-15T00:00:00+00:00", [name for name, _, _ in AGENTS]),
        ("updatedAfter > 2026-01-01 AND updatedAt > 2026-02-28", ["Tide Tables", "Invoice Reader"]),
        ("identifier = 'urn:air:sea.example:a2a:agent'", ["Tide Tables"]),
        ("  ", [name for name, _, _ in AGENTS]),
    ],
)
def test_the_filter_selects_exactly(client, catalog, expression: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert names(client, filter=expression) == expected


def test_total_counts_what_the_filter_selects_and_is_left_out_when_rows_are_checked(client, catalog) -> None:  # type: ignore[no-untyped-def]
    assert listed(client, filter="tags = weather")["total"] == 2
    assert listed(client, filter="type = application/mcp-server-card+json")["total"] == 0
    assert "total" not in listed(client, filter="displayName : tide")


def test_registration_order_is_the_order(client, catalog) -> None:  # type: ignore[no-untyped-def]
    expected = [name for name, _, _ in AGENTS]
    for order in ("createdAt", "createdAt asc", " createdAt  ASC "):
        assert names(client, orderBy=order) == expected


def test_pages_hold_every_agent_once(client, auth, catalog) -> None:  # type: ignore[no-untyped-def]
    for n in range(7):
        register(client, auth, agent_card(f"Paging {n}", "pages", "Paging", ["paging"]), f"https://p{n}.example/c.json")
    for params in ({}, {"orderBy": "createdAt"}, {"filter": "displayName : 'paging'"}):
        seen, token, sizes = [], None, []
        while True:
            body = listed(client, pageSize=3, **params, **({"pageToken": token} if token else {}))
            seen += [item["identifier"] for item in body["items"]]
            sizes.append(len(body["items"]))
            token = body.get("pageToken")
            if not token:
                break
        expected = 7 if "filter" in params else 11
        assert len(seen) == len(set(seen)) == expected, params
        assert all(size <= 3 for size in sizes)


def test_a_token_belongs_to_its_filter_and_order(client, catalog) -> None:  # type: ignore[no-untyped-def]
    token = listed(client, pageSize=1)["pageToken"]
    assert len(listed(client, pageSize=1, pageToken=token)["items"]) == 1
    assert "start again" in refusal(
        client.get("/ard/agents?" + urlencode({"pageSize": 1, "pageToken": token, "filter": "tags = weather"}))
    )


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"filter": "tags = weather OR publisherId = wx.example"}, "OR joins comparisons of one field"),
        ({"filter": "NOT tags = weather"}, "NOT is not supported"),
        ({"filter": "-tags = weather"}, "negation"),
        ({"filter": "tags != weather"}, "tags takes = or :, not !="),
        ({"filter": "createdAfter < 2026-01-01"}, "createdAfter takes = or > or >=, not <"),
        ({"filter": "color = red"}, "unknown field 'color'; the fields are displayName"),
        ({"filter": "tags weather"}, "expected an operator (=, :, >, >=) after 'tags' (at character 6)"),
        ({"filter": "tags = weather and health = up"}, "expected AND, OR or the end of the filter (at character 16)"),
        ({"filter": "tags = 'weather"}, "is not closed"),
        ({"filter": "(tags = weather"}, "expected ')'"),
        ({"filter": "tags ="}, "expected a value"),
        ({"filter": "createdAfter = yesterday"}, "must be an ISO 8601 time"),
        ({"filter": "health = sick"}, "the states are up, degraded"),
        ({"filter": "contains(displayName, 'x')"}, "unknown field 'contains'"),
        ({"filter": "displayName = a,b"}, "takes one name; quote a name that holds a comma"),
        ({"filter": " AND ".join(["tags = a"] * 33)}, "at most 32 comparisons"),
        ({"filter": "(" * 9 + "tags = a" + ")" * 9}, "nest deeper than 8"),
        ({"orderBy": "displayName"}, "orderBy 'displayName' is not offered: agents are listed in registration order"),
        ({"orderBy": "createdAt desc"}, "orderBy 'createdAt desc' is not offered"),
        ({"orderBy": "health"}, "filter with updatedAfter for what changed"),
        ({"pageSize": "0"}, "pageSize must be a whole number from 1"),
        ({"pageSize": "ten"}, "pageSize must be a whole number"),
        ({"pageToken": "junk"}, "pageToken is not one this registry issued"),
        ({"page": "2"}, "the query string has unknown parameter 'page'; its parameters are filter, orderBy"),
    ],
)
def test_refusals_point_at_what_to_change(client, catalog, params: dict[str, str], says: str) -> None:  # type: ignore[no-untyped-def]
    assert says in refusal(client.get("/ard/agents?" + urlencode(params)))


def test_a_parameter_given_twice_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    assert "give filter once" in refusal(client.get("/ard/agents?filter=tags%3Da&filter=tags%3Db"))


def test_page_size_over_the_maximum_is_served(client, catalog) -> None:  # type: ignore[no-untyped-def]
    assert len(listed(client, pageSize=1000)["items"]) == 4


def test_the_parser_reads_precedence_quotes_and_escapes() -> None:
    selection = parse_filter(r"tags = a OR tags = 'b c' AND displayName = 'it\'s' AND (inputModes : text/plain)")
    assert selection.groups == (("tag", ("a", "b c")), ("input", ("text/plain",)))
    assert selection.name_equals == "it's"
    assert parse_filter("updatedAfter >= 2026-01-01").updated_since == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert parse_filter("updatedAfter > 2026-01-01").updated_since == dt.datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC)
    assert parse_filter("publisherId = a.example AND publisher = a.example,b.example").groups == (
        ("host", ("a.example",)),
    )
    assert parse_filter("health = up,down AND health = down").groups == (("health", ("down",)),)
    assert parse_filter("health = up AND health = down").nothing
    with pytest.raises(InvalidArgument):
        check_order("updatedAt desc")
