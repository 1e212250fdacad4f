"""`agentdex ard search|explore` end to end: a real registry on loopback holding real cards, the
command driving its ARD API."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from cli.main import cli
from tests.support.cards import make_card

CATALOG = [
    ("Currency Converter", ["finance", "currency"], "Converts amounts between euros, dollars and yen."),
    ("Weather Forecaster", ["weather", "forecast"], "Forecasts rain and sun for any city."),
    ("Invoice Reader", ["finance", "documents"], "Reads invoices and extracts totals."),
]


def run(*args: str, url: str) -> Any:
    return CliRunner().invoke(cli, ["ard", *args], env={"AGENTDEX_URL": url}, catch_exceptions=False)


def seed(client: Any, auth: dict[str, str]) -> None:
    for index, (name, tags, description) in enumerate(CATALOG):
        card = make_card(name, tags=tags, description=description, push=True)
        created = client.post(
            "/v1/agents", json={"card": card, "cardUrl": f"https://a{index}.example/card.json"}, headers=auth
        )
        assert created.status_code == 201, created.json


def test_search_ranks_by_the_words_and_filters(registry_url: str, client: Any, auth: dict[str, str]) -> None:
    seed(client, auth)
    found = run("search", "convert euros into yen", "--json", url=registry_url)
    assert found.exit_code == 0, found.output
    results = json.loads(found.output)["results"]
    assert results[0]["displayName"] == "Currency Converter"
    assert 0 <= results[0]["score"] <= 100 and results[0]["source"].endswith("/ard")

    filtered = run(
        "search", "reads", "--filter", "tags=finance,weather", "--filter", "health=unknown", url=registry_url
    )
    assert filtered.exit_code == 0, filtered.output
    assert "Invoice Reader" in filtered.output and "Weather Forecaster" not in filtered.output


def test_explore_counts_the_facets_of_the_matches(registry_url: str, client: Any, auth: dict[str, str]) -> None:
    seed(client, auth)
    answer = run("explore", "--facet", "tags", "--json", url=registry_url)
    assert answer.exit_code == 0, answer.output
    buckets = {b["value"]: b["count"] for b in json.loads(answer.output)["facets"]["tags"]["buckets"]}
    assert buckets["finance"] == 2 and buckets["weather"] == 1
    human = run("explore", "--filter", "tags=finance", "--facet", "tags", url=registry_url)
    assert "finance" in human.output and "weather" not in human.output


def test_refusals_exit_non_zero_with_the_registry_message(registry_url: str) -> None:
    bad = run("search", "anything", "--filter", "colour=blue", url=registry_url)
    assert bad.exit_code == 1 and "INVALID_ARGUMENT" in bad.output and "colour" in bad.output
    usage = run("search", "anything", "--filter", "tags", url=registry_url)
    assert usage.exit_code == 2 and "KEY=VALUE" in usage.output
