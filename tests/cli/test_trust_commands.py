"""`agentdex show` prints the signature state and `agentdex search --verified` filters on it,
against a real registry served on loopback."""

from __future__ import annotations

import json
from typing import Any

import requests
from click.testing import CliRunner, Result

from cli.main import cli
from signing import generate_key, public_jwks, sign_card
from tests.support.cards import make_card
from tests.support.servers import CardServer


def run(url: str, *args: str, token: str | None = None) -> Result:
    env = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {})}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def upload(url: str, token: str, card: dict[str, Any], name: str) -> str:
    response = requests.post(
        f"{url}/v1/agents",
        json={"card": card, "cardUrl": f"https://{name}.example.com/c.json"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_show_and_search_by_signature_state(registry_url: str, writer_token: str) -> None:
    key = generate_key("EdDSA")
    requests.post(
        f"{registry_url}/v1/keys",
        json={"jwks": public_jwks([key])},
        headers={"Authorization": f"Bearer {writer_token}"},
        timeout=10,
    )
    verified = upload(registry_url, writer_token, sign_card(make_card("Signed"), key), "signed")
    upload(registry_url, writer_token, make_card("Plain"), "plain")
    shown = run(registry_url, "show", verified)
    assert shown.exit_code == 0 and f"signature: verified {key.kid}  (checked " in shown.output
    found = json.loads(run(registry_url, "search", "--verified", "--json").output)["items"]
    assert [a["id"] for a in found] == [verified]
    unsigned = json.loads(run(registry_url, "search", "--signature", "unsigned", "--json").output)["items"]
    assert [a["name"] for a in unsigned] == ["Plain"]
    contradiction = run(registry_url, "search", "--verified", "--signature", "invalid")
    assert contradiction.exit_code == 2


def test_register_with_the_agents_jwks_url(registry_url: str, writer_token: str, card_server: CardServer) -> None:
    key = generate_key("ES256")
    jwks_url = card_server.serve_json("/keys.json", public_jwks([key]))
    card_server.serve_json(
        "/.well-known/agent-card.json", sign_card(make_card("Keyed", url=card_server.url("/a2a")), key)
    )
    result = run(registry_url, "register", card_server.base_url, "--jwks-url", jwks_url, "--json", token=writer_token)
    agent = json.loads(result.output)
    assert result.exit_code == 0 and (agent["jwksUrl"], agent["signature"]["state"]) == (jwks_url, "verified")
