"""Agents built after the seed document "Protocol Details" serve their card at `GET /agentCard`:
discovery tries it last, after the two well-known URIs, so such an agent registers from its base
URL, and `agentdex card validate` finds its card the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from cli.main import cli
from registry.catalog.fetcher import card_candidates
from tests.support.seed_agents import SeedAgent


@pytest.fixture
def seed_agent() -> Iterator[SeedAgent]:
    agent = SeedAgent()
    yield agent
    agent.stop()
    assert agent.tasks == {}  # registering, validating and probing never created work on it


def test_agent_card_is_the_last_candidate_and_an_exact_card_url():
    assert card_candidates("https://agent.example.com") == [
        "https://agent.example.com/.well-known/agent-card.json",
        "https://agent.example.com/.well-known/agent.json",
        "https://agent.example.com/agentCard",
    ]
    assert card_candidates("https://agent.example.com/team/")[-2:] == [
        "https://agent.example.com/team/agentCard",
        "https://agent.example.com/agentCard",
    ]
    assert card_candidates("https://agent.example.com/agentCard") == ["https://agent.example.com/agentCard"]


def test_a_seed_agent_registers_from_its_base_url(client, auth, seed_agent):
    response = client.post("/v1/agents", json={"url": seed_agent.base_url}, headers=auth)
    assert response.status_code == 201, response.json
    agent = response.json
    assert agent["cardUrl"] == seed_agent.card_url
    assert agent["name"] == "Seed Agent" and agent["tags"] == ["seed"]
    assert agent["interfaces"] == [
        {"url": seed_agent.rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}
    ]
    assert client.get(f"/v1/agents/{agent['id']}/card").json == seed_agent.card_dict()
    assert seed_agent.card_fetches == 1 and seed_agent.calls == []


def test_its_card_is_judged_valid(client, seed_agent):
    report = client.post("/v1/validate", json=seed_agent.card_dict())
    assert report.status_code == 200, report.json
    assert report.json["valid"] is True, report.json


def test_card_validate_discovers_the_agent_card_of_a_base_url(seed_agent):
    result = CliRunner().invoke(cli, ["card", "validate", seed_agent.base_url, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["valid"] is True
    assert seed_agent.card_fetches == 1
