"""Query strings are bounded for every endpoint in one place: a value over 1,024 characters, or
more than 100 values, is a 400 `query_over_limit` naming the parameter, before any view (or the
database) sees it."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from registry.request_input import MAX_QUERY_VALUE_CHARS, MAX_QUERY_VALUES
from tests.support.cards import make_card


def refused(response: Any, parameter: str) -> None:
    assert response.status_code == 400, response.get_data()[:300]
    error = response.json["error"]
    assert error["code"] == "query_over_limit" and error["details"]["parameter"] == parameter
    assert repr(parameter) in error["message"]


@pytest.fixture
def tagged(client: Any, auth: dict[str, str]) -> str:
    """An agent whose tags the tag list and searches compare the values with."""
    card = make_card("Tagged", tags=["weather", "a" * 60])
    created = client.post("/v1/agents", json={"card": card, "cardUrl": "https://t.example/card.json"}, headers=auth)
    assert created.status_code == 201, created.json
    return str(created.json["id"])


def test_a_50000_character_tag_prefix_is_refused_naming_it(client: Any, tagged: str) -> None:
    refused(client.get("/v1/tags?prefix=" + "a" * 50_000), "prefix")


@pytest.mark.parametrize(
    "query",
    ["/v1/tags?prefix=", "/v1/agents?q=", "/v1/agents?tag=", "/v1/agents?skill=", "/v1/agents?inputMode="],
)
def test_values_up_to_the_limit_are_answered_and_longer_ones_refused(client: Any, tagged: str, query: str) -> None:
    at_limit = client.get(query + "%25_" * (MAX_QUERY_VALUE_CHARS // 2))  # 1,024 of LIKE's wildcards
    assert at_limit.status_code == 200, at_limit.get_data()[:300]
    refused(client.get(query + "a" * (MAX_QUERY_VALUE_CHARS + 1)), query.split("?")[1].rstrip("="))


def test_every_get_endpoint_refuses_an_over_long_value(
    app: Any, client: Any, auth: dict[str, str], tagged: str
) -> None:
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        url = rule.build({name: tagged if name == "agent_id" else "x" for name in rule.arguments})[1]
        refused(client.get(f"{url}?limit={'9' * 2_000}", headers=auth), "limit")
        refused(client.get(f"{url}?{'n' * 2_000}=1", headers=auth), "n" * 40 + "…")


def test_more_than_100_values_are_refused(client: Any) -> None:
    tags = "&".join(f"tag={quote(str(i))}" for i in range(MAX_QUERY_VALUES))
    seen_by_search = client.get(f"/v1/agents?{tags}")  # search's own answer: too many tags for it
    assert seen_by_search.status_code == 422 and "tags" in seen_by_search.json["error"]["message"]
    over = client.get(f"/v1/agents?{tags}&match=any")
    refused(over, "match")
    assert over.json["error"]["details"]["limit"] == MAX_QUERY_VALUES
