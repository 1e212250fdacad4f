"""An agent named by a prefix of its id (as people copy them: `agentdex show 5b0c1d2e`), on every
route that takes an agent id: resolved when unique, refused with a reason when not."""

from __future__ import annotations

import pytest

from registry.catalog import CardFetcher, CatalogService
from registry.container import catalog_store
from registry.trust import NoTrust
from tests.support.cards import make_card

TWINS = ("ab12cd34-0000-4000-8000-000000000001", "ab12cd34-0000-4000-8000-000000000002")


@pytest.fixture
def agent_id(client, auth) -> str:  # type: ignore[no-untyped-def]
    body = {"card": make_card("Weather Agent", tags=["weather"]), "cardUrl": "https://w.example/card.json"}
    return str(client.post("/v1/agents", json=body, headers=auth).json["id"])


@pytest.fixture
def twins(services, actor) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """Two agents whose ids share their first 13 characters, as the registry could mint them."""
    ids = iter(TWINS)
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes)
    catalog = CatalogService(
        catalog_store(services.engine), fetcher, services.limits, NoTrust(), new_id=lambda: next(ids)
    )
    for n in (1, 2):
        catalog.register_card(actor, make_card(f"Twin {n}"), f"https://twin{n}.example/card.json")
    return TWINS


@pytest.mark.parametrize("length", [8, 13, 35])
def test_a_unique_prefix_names_the_agent_on_every_route(client, auth, agent_id, length):
    prefix = agent_id[:length]
    assert client.get(f"/v1/agents/{prefix}").json["id"] == agent_id
    assert client.get(f"/v1/agents/{prefix.upper()}").json["id"] == agent_id  # UUIDs ignore case
    assert client.get(f"/v1/agents/{prefix}/card").json["name"] == "Weather Agent"
    assert [v["version"] for v in client.get(f"/v1/agents/{prefix}/versions").json["items"]] == [1]
    assert client.get(f"/v1/agents/{prefix}/health").json["agentId"] == agent_id
    assert client.get(f"/v1/agents/{prefix}/signatures").json["agentId"] == agent_id
    changed = client.patch(f"/v1/agents/{prefix}", json={"status": "deprecated"}, headers=auth)
    assert changed.status_code == 200 and changed.json["status"] == "deprecated"
    assert client.delete(f"/v1/agents/{prefix}", headers=auth).status_code == 204
    assert client.get(f"/v1/agents/{agent_id}").status_code == 404


def test_a_short_prefix_is_refused_with_what_to_give(client, agent_id):
    response = client.get(f"/v1/agents/{agent_id[:7]}")
    assert response.status_code == 400
    assert "at least 8 characters" in response.json["error"]["message"]


def test_an_ambiguous_prefix_lists_the_candidates(client, auth, twins):
    response = client.get("/v1/agents/ab12cd34-0000")
    assert response.status_code == 409
    error = response.json["error"]
    assert error["code"] == "ambiguous_id" and error["details"]["candidates"] == list(twins)
    assert twins[0] in error["message"] and "more characters" in error["message"]
    # Writes are refused the same way: nothing is changed on a guess.
    assert client.delete("/v1/agents/ab12cd34", headers=auth).status_code == 409
    assert client.get(f"/v1/agents/{twins[0][:-1]}").status_code == 409
    assert client.get(f"/v1/agents/{twins[1]}").json["name"] == "Twin 2"


def test_an_unknown_prefix_or_id_is_not_found(client, agent_id):
    other = "0" if agent_id[0] != "0" else "1"
    for text in (other + agent_id[1:8], other + agent_id[1:]):
        response = client.get(f"/v1/agents/{text}")
        assert response.status_code == 404 and response.json["error"]["code"] == "not_found"


@pytest.mark.parametrize("last", ["%ED%9F%BF", "%F4%8F%BF%BF", "%EF%BF%BF"])  # U+D7FF, U+10FFFF, U+FFFF
def test_a_prefix_ending_where_no_character_follows_is_not_found(client, agent_id, last):
    for route in ("", "/health", "/signatures"):
        response = client.get(f"/v1/agents/abcdefg{last}{route}")  # its upper bound was a surrogate or no character
        assert response.status_code == 404 and response.json["error"]["code"] == "not_found"


def test_ids_of_the_last_hex_range_resolve(services, actor, client):
    ids = iter(["ffffffff-0000-4000-8000-000000000001"])
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes)
    catalog = CatalogService(
        catalog_store(services.engine), fetcher, services.limits, NoTrust(), new_id=lambda: next(ids)
    )
    catalog.register_card(actor, make_card("Last"), "https://last.example/card.json")
    assert client.get("/v1/agents/ffffffff").json["name"] == "Last"
