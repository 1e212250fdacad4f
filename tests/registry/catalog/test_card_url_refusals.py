"""Card URLs with control characters, whitespace, credentials or template placeholders are refused
with 400 `invalid_url` wherever a card URL enters: registration by URL and by upload, import items
and the CLI. Nothing is stored, nothing is fetched, nothing is repaired silently."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from cli.main import cli
from registry.schema import Agent, AgentCard
from tests.support.cards import make_card

BAD_URLS = {
    "control": ("https://agent.example.com/\x01card.json", "control character"),
    "newline": ("https://agent.example.com/card.json\n", "control character"),
    "space": ("https://agent.example.com/my card.json", "space"),
    "tab": ("https://agent.example.com/\tcard.json", "control character"),
    "userinfo": ("https://user:pw@agent.example.com/card.json", "credentials"),
    "user only": ("https://user@agent.example.com/card.json", "credentials"),
    "placeholder": ("https://<AGENT_HOST>/.well-known/agent-card.json", "template placeholder"),
    "bad host": ("https://agent_host.example.com/card.json", "not a valid host name"),
    "bad port": ("https://agent.example.com:99999/card.json", "port"),
}


def _stored(services) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with services.sessions() as session:
        return (
            session.scalar(select(func.count()).select_from(Agent)),
            session.scalar(select(func.count()).select_from(AgentCard)),
        )


def _assert_invalid_url(response, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 400, response.json
    error = response.json["error"]
    assert error["code"] == "invalid_url"
    assert expected in error["message"]
    assert error["details"]["rule"] in ("url-invalid", "url-template-placeholder")


@pytest.mark.parametrize(("url", "expected"), BAD_URLS.values(), ids=BAD_URLS.keys())
def test_an_upload_with_a_bad_card_url_is_400_and_stores_nothing(client, auth, card, services, url, expected):
    response = client.post("/v1/agents", json={"card": card, "cardUrl": url}, headers=auth)
    _assert_invalid_url(response, expected)
    assert _stored(services) == (0, 0)


@pytest.mark.parametrize("name", ["control", "userinfo", "placeholder"])
def test_registering_a_bad_url_is_400_before_anything_is_fetched(client, auth, card_server, card, services, name):
    card_server.serve_json("/.well-known/agent-card.json", card)
    url, expected = BAD_URLS[name]
    loopback = url.replace("https://", "http://").replace("agent.example.com", card_server.base_url[7:])
    response = client.post("/v1/agents", json={"url": loopback}, headers=auth)
    _assert_invalid_url(response, expected)
    assert card_server.requests == []
    assert _stored(services) == (0, 0)


def test_credentials_are_refused_not_dropped(client, auth, card, services):
    response = client.post(
        "/v1/agents", json={"card": card, "cardUrl": "https://admin:hunter2@agent.example.com/"}, headers=auth
    )
    _assert_invalid_url(response, "credentials")
    plain = client.post("/v1/agents", json={"card": card, "cardUrl": "https://agent.example.com/"}, headers=auth)
    assert plain.status_code == 201, plain.json  # the URL without credentials was never taken
    assert plain.json["cardUrl"] == "https://agent.example.com/"


def test_import_items_with_bad_card_urls_fail_alone(client, auth, services):
    items = [
        {"card": make_card("Good"), "cardUrl": "https://good.example.com/card.json"},
        {"card": make_card("Control"), "cardUrl": "https://control.example.com/\x01card.json"},
        {"card": make_card("Creds"), "cardUrl": "https://u:p@creds.example.com/card.json"},
    ]
    response = client.post("/v1/agents/import", json={"items": items}, headers=auth)
    assert response.status_code == 200, response.json
    assert (response.json["created"], response.json["failed"]) == (1, 2)
    codes = {r["index"]: r["error"]["code"] for r in response.json["results"] if r["error"]}
    assert codes == {1: "invalid_url", 2: "invalid_url"}
    assert _stored(services) == (1, 1)


def test_a_nul_in_a_card_url_refuses_the_body_naming_it(client, auth, card, card_server, services):
    # U+0000 is refused wherever it is in a body (PostgreSQL's text cannot hold it), before any
    # field is read: the whole body, an import's included, as for an unpaired surrogate.
    nul = "https://agent.example.com/\x00card.json"
    bodies = {
        "/v1/agents": [
            ({"card": card, "cardUrl": nul}, "$.cardUrl"),
            ({"url": card_server.base_url + "/\x00"}, "$.url"),
        ],
        "/v1/agents/import": [({"items": [{"card": card, "cardUrl": nul}]}, "$.items[0].cardUrl")],
    }
    for url, cases in bodies.items():
        for body, path in cases:
            response = client.post(url, json=body, headers=auth)
            assert response.status_code == 400, response.json
            assert response.json["error"]["code"] == "nul_character"
            assert response.json["error"]["details"]["path"] == path and path in response.json["error"]["message"]
    assert card_server.requests == [] and _stored(services) == (0, 0)


def test_the_cli_register_reports_the_refusal(registry_url, writer_token, card_server, services):
    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": writer_token}
    url = f"http://someone:secret@{card_server.base_url[7:]}/"
    result = CliRunner().invoke(cli, ["register", url], env=env, catch_exceptions=False)
    assert result.exit_code != 0
    assert "invalid_url" in result.output and "credentials" in result.output
    assert card_server.requests == []
    assert _stored(services) == (0, 0)
