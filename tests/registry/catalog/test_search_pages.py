"""Paging through searches: every combination of drivers and probes returns each matching agent
once, in registration order (ranked searches: in ranked order), however small the pages."""

from __future__ import annotations

import pytest

from tests.support.cards import make_card

SIZE = 30


def _tags(n: int) -> list[str]:
    return [tag for tag, every in (("red", 2), ("green", 3), ("blue", 5)) if n % every == 0] or ["grey"]


@pytest.fixture
def catalog(client, auth) -> list[str]:  # type: ignore[no-untyped-def]
    """Names of the agents in registration order."""
    names = []
    for n in range(SIZE):
        name = f"Agent {n:02d}"
        description = "finds alpha routes" if n % 4 == 0 else "finds beta routes"
        card = make_card(name, tags=_tags(n), description=description, push=n % 7 == 0)
        response = client.post(
            "/v1/agents", json={"card": card, "cardUrl": f"https://a{n}.example/card.json"}, headers=auth
        )
        assert response.status_code == 201, response.json
        names.append(name)
    return names


def _all_items(client, query: str, limit: int, cursor: str | None = None) -> list[dict]:  # type: ignore[no-untyped-def]
    items = []
    while True:
        response = client.get(f"/v1/agents?{query}&limit={limit}" + (f"&cursor={cursor}" if cursor else ""))
        assert response.status_code == 200, response.json
        items += response.json["items"]
        cursor = response.json["nextCursor"]
        if not cursor:
            return items


def _all_pages(client, query: str, limit: int, cursor: str | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    return [agent["name"] for agent in _all_items(client, query, limit, cursor)]


def _expected(catalog: list[str], keep) -> list[str]:  # type: ignore[no-untyped-def]
    return [name for n, name in enumerate(catalog) if keep(n)]


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 50])
@pytest.mark.parametrize(
    "query,keep",
    [
        ("tag=red&tag=blue&match=any", lambda n: n % 2 == 0 or n % 5 == 0),
        ("tag=red&tag=green&tag=blue&match=any", lambda n: n % 2 == 0 or n % 3 == 0 or n % 5 == 0),
        ("tag=green&match=any", lambda n: n % 3 == 0),
        ("tag=green&tag=unknown&match=any", lambda n: n % 3 == 0),
        ("tag=red&tag=green", lambda n: n % 6 == 0),
        ("tag=red&tag=green&tag=blue", lambda n: n % 30 == 0),
        (
            "tag=red&tag=blue&match=any&capability=pushNotifications",
            lambda n: n % 7 == 0 and (n % 2 == 0 or n % 5 == 0),
        ),
        ("capability=pushNotifications", lambda n: n % 7 == 0),
        ("", lambda n: True),
    ],
)
def test_every_match_once_in_registration_order(client, catalog, query, keep, limit):
    assert _all_pages(client, query, limit) == _expected(catalog, keep)


RANKED = [
    ("q=alpha", lambda n: n % 4 == 0),
    ("q=alpha&tag=green", lambda n: n % 12 == 0),
    ("q=routes&tag=red&tag=grey&match=any", lambda n: n % 2 == 0 or n % 3 and n % 5),
    ("q=alpha routes", lambda n: True),
]


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 50])
@pytest.mark.parametrize("ranking", ["fused", "lexical"])
@pytest.mark.parametrize("query,keep", RANKED)
def test_every_ranked_match_once_in_ranked_order(client, catalog, query, keep, ranking, limit):
    """Best first (scores are shown rounded; the order is the unrounded one)."""
    items = _all_items(client, f"{query}&ranking={ranking}", limit)
    names = [item["name"] for item in items]
    assert len(names) == len(set(names))
    scores = [item["relevance"]["score"] for item in items]
    assert scores == sorted(scores, reverse=True)
    assert names == [item["name"] for item in _all_items(client, f"{query}&ranking={ranking}", 200)]
    lexical = [item["name"] for item in items if item["relevance"]["matched"]]
    assert sorted(lexical) == _expected(catalog, keep)  # every agent sharing a word, whatever the page size
    if ranking == "lexical":
        assert names == lexical


def test_agents_with_every_word_come_before_agents_with_one(client, catalog):
    names = _all_pages(client, "q=alpha routes", 4)
    alpha = _expected(catalog, lambda n: n % 4 == 0)
    assert len(names) == SIZE and sorted(names[: len(alpha)]) == alpha


def test_pages_of_any_tags_skip_agents_removed_meanwhile(client, auth, catalog):
    first = client.get("/v1/agents?tag=red&tag=blue&match=any&limit=4").json
    assert [a["name"] for a in first["items"]] == ["Agent 00", "Agent 02", "Agent 04", "Agent 05"]
    removed = client.get("/v1/agents?tag=red&tag=blue&match=any&limit=6").json["items"][5]  # Agent 08
    assert client.delete(f"/v1/agents/{removed['id']}", headers=auth).status_code in (200, 204)
    rest = _all_pages(client, "tag=red&tag=blue&match=any", 4, cursor=first["nextCursor"])
    expected = _expected(catalog, lambda n: n > 5 and n != 8 and (n % 2 == 0 or n % 5 == 0))
    assert rest == expected
