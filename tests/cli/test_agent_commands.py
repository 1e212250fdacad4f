"""The commands a user reaches for after registering: show by a prefix of the id, undeprecate,
refresh, versions, tags, and a delete that asks first. A real registry on loopback, a real card
server, the `agentdex` command driving both."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from registry.catalog import CardFetcher, CatalogService
from registry.container import catalog_store
from registry.trust import NoTrust
from tests.support.cards import make_card, with_changes

CARD_PATH = "/.well-known/agent-card.json"


def run(*args: str, url: str, token: str | None = None, stdin: str | None = None) -> Result:
    env = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {})}
    return CliRunner().invoke(cli, list(args), env=env, input=stdin, catch_exceptions=False)


@pytest.fixture
def weather(registry_url, writer_token, card_server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A crawled agent: its card is served by `card_server`, so a refresh fetches it again."""
    card = make_card("Weather Agent", tags=["weather", "forecast"])
    card_server.serve_json(CARD_PATH, card)
    registered = run("register", card_server.base_url, "--json", token=writer_token, url=registry_url)
    assert registered.exit_code == 0, registered.output
    return {"id": json.loads(registered.output)["id"], "card": card}  # type: ignore[dict-item]


def test_show_takes_a_prefix_of_the_id(registry_url, weather):
    shown = run("show", weather["id"][:8], url=registry_url)
    assert shown.exit_code == 0, shown.output
    assert f"Weather Agent  ({weather['id']})" in shown.output
    as_json = json.loads(run("show", weather["id"][:13], "--json", url=registry_url).output)
    assert as_json["id"] == weather["id"]
    short = run("show", weather["id"][:5], url=registry_url)
    assert short.exit_code == 1 and "at least 8 characters" in short.output and "HTTP 400" in short.output


def test_an_ambiguous_prefix_names_the_candidates(services, writer_token, registry_url):
    actor = services.tokens.authenticate(writer_token)
    ids = iter(["c0ffee00-0000-4000-8000-00000000000a", "c0ffee00-0000-4000-8000-00000000000b"])
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes)
    catalog = CatalogService(
        catalog_store(services.engine), fetcher, services.limits, NoTrust(), new_id=lambda: next(ids)
    )
    for n in (1, 2):
        catalog.register_card(actor, make_card(f"Cup {n}"), f"https://cup{n}.example/card.json")
    result = run("show", "c0ffee00", url=registry_url)
    assert result.exit_code == 1 and "ambiguous_id" in result.output
    assert "c0ffee00-0000-4000-8000-00000000000a" in result.output and "give more characters" in result.output


def test_undeprecate_brings_an_agent_back_to_search(registry_url, writer_token, weather):
    prefix = weather["id"][:8]
    deprecated = run("deprecate", prefix, "--message", "use v2", token=writer_token, url=registry_url)
    assert deprecated.exit_code == 0 and "deprecated" in deprecated.output
    assert json.loads(run("search", "--tag", "weather", "--json", url=registry_url).output)["items"] == []

    back = run("undeprecate", prefix, "--json", token=writer_token, url=registry_url)
    assert back.exit_code == 0, back.output
    agent = json.loads(back.output)
    assert agent["status"] == "active" and agent.get("statusMessage") is None
    assert "is active again" in run("undeprecate", prefix, token=writer_token, url=registry_url).output
    found = json.loads(run("search", "--tag", "weather", "--json", url=registry_url).output)["items"]
    assert [a["id"] for a in found] == [weather["id"]]


def test_refresh_fetches_the_card_now_and_versions_show_what_changed(registry_url, writer_token, card_server, weather):
    prefix = weather["id"][:8]
    same = run("refresh", prefix, token=writer_token, url=registry_url)
    assert same.exit_code == 0, same.output
    assert f"Weather Agent ({weather['id']}): card unchanged: still version 1" in same.output

    card_server.serve_json(CARD_PATH, with_changes(weather["card"], description="Forecasts, now hourly"))
    changed = json.loads(run("refresh", prefix, "--json", token=writer_token, url=registry_url).output)
    assert changed["changed"] is True and changed["agent"]["cardVersion"] == 2

    history = run("versions", prefix, url=registry_url)
    assert history.exit_code == 0, history.output
    lines = history.output.splitlines()
    assert lines[0].split() == ["VERSION", "SOURCE", "FETCHED", "PROTOCOL", "VALID", "CHANGES"]
    assert lines[1].startswith("2 *") and "~/description" in lines[1] and "valid" in lines[1]
    assert lines[2].startswith("1 ") and "(first version)" in lines[2]
    items = json.loads(run("versions", prefix, "--json", url=registry_url).output)["items"]
    assert [v["version"] for v in items] == [2, 1] and items[0]["changes"]["changed"] == ["/description"]

    no_token = run("refresh", prefix, url=registry_url)
    assert no_token.exit_code == 1 and "HTTP 401" in no_token.output


def test_tags_lists_tags_with_counts(client, auth, registry_url, weather):
    card = {"card": make_card("Sky Agent", tags=["weather"]), "cardUrl": "https://sky.example/card.json"}
    assert client.post("/v1/agents", json=card, headers=auth).status_code == 201

    listed = run("tags", url=registry_url)
    assert listed.exit_code == 0, listed.output
    rows = [line.split() for line in listed.output.splitlines()]
    assert rows[:3] == [["AGENTS", "TAG"], ["2", "weather"], ["1", "forecast"]]
    narrowed = json.loads(run("tags", "--prefix", "FORE", "--json", url=registry_url).output)
    assert narrowed == {"items": [{"tag": "forecast", "count": 1}]}
    assert "no tags" in run("tags", "--prefix", "zzz", url=registry_url).output


def test_delete_asks_first_and_names_the_agent(registry_url, writer_token, weather):
    prefix = weather["id"][:8]
    kept = run("delete", prefix, token=writer_token, url=registry_url, stdin="n\n")
    assert kept.exit_code == 1 and f"Delete agent Weather Agent ({weather['id']})" in kept.output
    assert run("show", prefix, url=registry_url).exit_code == 0

    deleted = run("delete", prefix, "--json", token=writer_token, url=registry_url, stdin="y\n")
    assert deleted.exit_code == 0, deleted.output
    assert json.loads(deleted.stdout) == {"deleted": weather["id"]}  # the question went to stderr
    assert run("show", weather["id"], url=registry_url).exit_code == 1


@pytest.mark.parametrize(
    "typed", ["../../v1/tokens", "a/../../../v1/tokens", "abcdefgh?limit=1", "abcdefgh#y", "%2e%2e/%2e%2e/v1/tokens"]
)
def test_an_id_is_one_path_segment_never_another_url(registry_url, admin_token, typed):
    for command in (["show", typed], ["versions", typed], ["health", typed], ["relay", "messages", typed]):
        result = run(*command, "--json", url=registry_url, token=admin_token)
        assert result.exit_code == 1, (command, result.output)
        assert json.loads(result.stdout)["error"]["code"] == "not_found", (command, result.output)


@pytest.mark.parametrize("typed", ["", ".", ".."])
def test_an_id_that_cannot_be_a_path_segment_is_a_usage_error(registry_url, typed):
    result = run("show", typed, "--json", url=registry_url)
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "usage"
