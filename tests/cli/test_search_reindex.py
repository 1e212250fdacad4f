"""`agentdex search reindex` on the registry's database, as an operator runs it after an upgrade:
agents whose vectors are missing (a new embedding model) are found by meaning again, and --all
rebuilds every agent's text and vector (a new text analysis)."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import delete, select

from cli.main import cli
from registry.app import create_app
from registry.catalog import AgentEmbedding
from registry.container import build_services
from registry.retrieval.embedding import MODEL_ID
from tests.support.cards import make_card

PARAPHRASE = "/v1/agents?q=is it going to be stormy this weekend&ranking=semantic"


def reindex(database_url: str, *args: str, **env: str) -> Result:
    result = CliRunner().invoke(
        cli,
        ["search", "reindex", *args, "--database", database_url],
        env={"AGENTDEX_SECRET_KEY": "x" * 32, **env},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def catalog(services, writer_token) -> list[str]:  # type: ignore[no-untyped-def]
    actor = services.tokens.authenticate(writer_token)
    cards = [
        make_card("Weather Agent", tags=["weather"], description="Forecasts rain, wind and temperature"),
        make_card("Recipe Finder", tags=["cooking"], description="Suggests dinner recipes"),
    ]
    return [
        services.catalog.register_card(actor, card, f"https://c{n}.example/card.json").agent.id
        for n, card in enumerate(cards)
    ]


@pytest.fixture
def restarted(settings, services):  # type: ignore[no-untyped-def]
    """The registry as a process started after the index changed would see it."""
    started = build_services(dataclasses.replace(settings))
    yield started
    started.close()


def vectors(services) -> list[str]:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return list(conn.scalars(select(AgentEmbedding.model)))


def test_missing_vectors_are_made_again_and_found_by_meaning(database_url, services, catalog, restarted):
    assert vectors(services) == [MODEL_ID, MODEL_ID]
    with services.engine.begin() as conn:  # as after an upgrade to another embedding model
        conn.execute(delete(AgentEmbedding))
    client = create_app(services=restarted).test_client()
    assert client.get(PARAPHRASE).json["items"] == []

    result = reindex(database_url)
    assert "Reindexed 2 agent(s)." in result.output
    assert vectors(services) == [MODEL_ID, MODEL_ID]
    assert [item["id"] for item in client.get(PARAPHRASE).json["items"]][:1] == [catalog[0]]
    assert "Reindexed 0 agent(s)." in reindex(database_url).output  # nothing left to do


def test_all_rebuilds_every_agents_text_and_vector(database_url, services, catalog, restarted):
    with services.engine.begin() as conn:  # as after a change to how text is analysed
        conn.execute(services.search._store.index.text_table().delete())
    client = create_app(services=restarted).test_client()
    assert client.get("/v1/agents?q=recipes&ranking=lexical").json["items"] == []
    assert "Reindexed 0 agent(s)." in reindex(database_url).output  # every vector is there: not enough

    assert "Reindexed 2 agent(s)." in reindex(database_url, "--all").output
    assert [item["id"] for item in client.get("/v1/agents?q=recipes&ranking=lexical").json["items"]] == [catalog[1]]
    assert [item["id"] for item in client.get("/v1/agents?q=weather&ranking=lexical").json["items"]] == [catalog[0]]
    assert vectors(services) == [MODEL_ID, MODEL_ID]


def test_without_semantic_search_there_are_no_vectors_to_make(database_url, services, catalog):
    with services.engine.begin() as conn:
        conn.execute(delete(AgentEmbedding))
    assert "Reindexed 0 agent(s)." in reindex(database_url, AGENTDEX_SEARCH_SEMANTIC="off").output
    assert vectors(services) == []
