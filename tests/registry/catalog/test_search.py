"""Finding agents: tags, text, skills, modes, capabilities, versions, pagination, tags listing."""

from __future__ import annotations

import pytest

from tests.support.cards import make_card, make_v03_card


@pytest.fixture
def catalog(client, auth):  # type: ignore[no-untyped-def]
    cards = {
        "weather": make_card("Weather Agent", tags=["Weather", "forecast"], streaming=True),
        "travel": make_card("Travel Planner", tags=["travel", "Forecast"], description="Plans trips with flights"),
        "maps": make_card("Map Maker", tags=["maps", "travel"], push=True),
        "legacy": make_v03_card("Legacy Helper", tags=["weather"]),
    }
    ids = {}
    for key, card in cards.items():
        response = client.post(
            "/v1/agents", json={"card": card, "cardUrl": f"https://{key}.example/card.json"}, headers=auth
        )
        assert response.status_code == 201, response.json
        ids[key] = response.json["id"]
    return ids


def _names(client, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    response = client.get("/v1/agents?" + query)
    assert response.status_code == 200, response.json
    return [a["name"] for a in response.json["items"]]


def test_tags_match_all_by_default_case_insensitively(client, catalog):
    assert _names(client, "tag=weather&tag=FORECAST") == ["Weather Agent"]
    assert _names(client, "tag=Travel") == ["Travel Planner", "Map Maker"]


def test_tags_match_any(client, catalog):
    assert _names(client, "tag=maps&tag=forecast&match=any") == ["Weather Agent", "Travel Planner", "Map Maker"]


def _ranked(client, query: str) -> list[tuple[str, list[str]]]:  # type: ignore[no-untyped-def]
    """Names and matched fields of a ranked search's results, best first."""
    response = client.get("/v1/agents?" + query)
    assert response.status_code == 200, response.json
    return [(a["name"], a["relevance"]["matched"]) for a in response.json["items"]]


def test_text_query_covers_names_descriptions_and_skills(client, catalog):
    # ranking=lexical: only agents sharing a word (fused also brings agents near in meaning).
    assert _ranked(client, "q=flights&ranking=lexical") == [("Travel Planner", ["description"])]
    assert _ranked(client, "q=legacy&ranking=lexical") == [("Legacy Helper", ["name", "description"])]
    assert _ranked(client, "q=helper skill&ranking=lexical")[0] == ("Legacy Helper", ["name", "skills", "description"])
    # Stemmed: "plan trip" finds "Plans trips"; any word will do, and the default ranking puts it first.
    assert _names(client, "q=plan trip&ranking=lexical") == ["Travel Planner"]
    assert _names(client, "q=planning a trip to nowhere")[0] == "Travel Planner"
    response = client.get("/v1/agents?q=%22%27%29")  # punctuation only: nothing, and no error
    assert response.status_code == 200 and response.json["items"] == []


def test_text_is_split_into_the_same_words_on_both_databases(client, auth):  # type: ignore[no-untyped-def]
    """Case and accents folded, stop words dropped, words stemmed, split at anything but letters
    and digits; whole words only. The analysis is the registry's own, so both databases agree."""
    card = make_card(
        "Café Größe", tags=["x"], description="Runs d01-tag03 jobs via weather_forecast at api.example.com"
    )
    response = client.post(
        "/v1/agents", json={"card": card, "cardUrl": "https://words.example/card.json"}, headers=auth
    )
    assert response.status_code == 201, response.json
    found = (
        "cafe",
        "CAFÉ",
        "große",
        "grosse",  # case folding: ß is "ss"
        "GRÖßE",
        "tag03",
        "d01-tag",
        "forecast",
        "forecasts",  # stemmed
        "forecasting",
        "weather",
        "example",
        "api.example",
        "the jobs",  # "the" is a stop word; "jobs" is the card's "jobs"
    )
    for query in found:
        assert _names(client, f"q={query}&ranking=lexical") == ["Café Größe"], query
    for query in ("afe", "weath", "tag0", "d02", "the"):  # whole words, not stop words
        assert _names(client, f"q={query}&ranking=lexical") == [], query


def test_structured_filters(client, catalog):
    assert _names(client, "capability=streaming") == ["Weather Agent", "Legacy Helper"]
    assert _names(client, "capability=pushNotifications") == ["Map Maker"]
    assert _names(client, "protocolVersion=0.3") == ["Legacy Helper"]
    assert _names(client, "protocolVersion=1.0&tag=weather") == ["Weather Agent"]
    assert _names(client, "outputMode=application/json&tag=maps") == ["Map Maker"]
    assert _names(client, "inputMode=TEXT/PLAIN&q=weather") == ["Weather Agent", "Legacy Helper"]
    assert _names(client, "skill=s1") == ["Legacy Helper"]


def test_pages_have_no_duplicates_or_gaps_while_entries_change(client, auth, catalog):
    seen = []
    page = client.get("/v1/agents?limit=2").json
    seen += [a["id"] for a in page["items"]]
    # a new agent and a deletion between pages
    client.post("/v1/agents", json={"card": make_card("Late"), "cardUrl": "https://late.example/c.json"}, headers=auth)
    client.delete(f"/v1/agents/{catalog['weather']}", headers=auth)
    while page["nextCursor"]:
        page = client.get(f"/v1/agents?limit=2&cursor={page['nextCursor']}").json
        seen += [a["id"] for a in page["items"]]
    assert len(seen) == len(set(seen)) == 5
    assert seen[:4] == [catalog["weather"], catalog["travel"], catalog["maps"], catalog["legacy"]]


def test_updated_since_supports_mirroring(client, catalog):
    assert len(client.get("/v1/agents?updatedSince=2000-01-01T00:00:00Z").json["items"]) == 4
    assert client.get("/v1/agents?updatedSince=2999-01-01T00:00:00Z").json["items"] == []


@pytest.mark.parametrize(
    "query,status",
    [
        ("bogus=1", 400),
        ("limit=0", 422),
        ("limit=201", 422),
        ("limit=x", 422),
        ("match=some", 422),
        ("capability=flying", 422),
        ("cursor=garbage", 422),
        ("updatedSince=yesterday", 422),
        ("status=gone", 422),
    ],
)
def test_bad_queries_are_refused_clearly(client, query, status):
    response = client.get("/v1/agents?" + query)
    assert response.status_code == status
    assert response.json["error"]["message"]


def test_tags_with_counts(client, catalog):
    tags = {t["tag"]: t["count"] for t in client.get("/v1/tags").json["items"]}
    assert tags["weather"] == 2 and tags["travel"] == 2 and tags["forecast"] == 2 and tags["maps"] == 1
    assert [t["tag"] for t in client.get("/v1/tags?prefix=TR").json["items"]] == ["travel"]


def test_validate_endpoint_reports_without_storing(client, card):
    ok = client.post("/v1/validate", json=card).json
    assert ok["valid"] is True and ok["protocolVersion"] == "1.0"
    bad = client.post("/v1/validate", json={"name": 1}).json
    assert bad["valid"] is False and bad["issues"]
    assert client.get("/v1/agents").json["items"] == []


def test_openapi_document_lists_the_api(client):
    doc = client.get("/openapi.json").json
    assert doc["openapi"].startswith("3.")
    assert {"/v1/agents", "/v1/agents/{agent_id}", "/v1/tags", "/v1/validate"} <= set(doc["paths"])


def test_tags_longer_than_the_index_keeps_register_and_are_found(client, auth):
    """Terms are indexed by their first 500 characters: two tags that share them are one index entry."""
    long_a, long_b = "x" * 600 + "-a", "x" * 600 + "-b"
    card = make_card("Long Tags", tags=[long_a, long_b])
    response = client.post("/v1/agents", json={"card": card, "cardUrl": "https://long.example/card.json"}, headers=auth)
    assert response.status_code == 201, response.json
    assert sorted(response.json["tags"]) == [long_a, long_b]
    assert _names(client, f"tag={long_a}") == ["Long Tags"]


def test_a_search_takes_at_most_32_tags(client, catalog):
    many = "&".join(f"tag=t{n}" for n in range(33))
    for match in ("all", "any"):
        response = client.get(f"/v1/agents?{many}&match={match}")
        assert response.status_code == 422
        assert (
            response.json["error"]["code"] == "invalid_request"
            and "at most 32 tags" in response.json["error"]["message"]
        )
    assert client.get("/v1/agents?" + "&".join(f"tag=t{n}" for n in range(32)) + "&match=any").status_code == 200
