"""Interoperability with the official JavaScript SDK (`@a2a-js/sdk`) as a peer, over real HTTP
on loopback: a card it signed, with the key in the agent's own JWKS, comes out `verified`; the
registry's endorsed cards and its own card verify with its verifier using the keys of
`/.well-known/jwks.json`, before and after `agentdex keys rotate`; a changed card does not."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli
from registry.container import Services
from signing import SigningKey, generate_key, public_jwks
from tests.support.cards import make_card, with_changes
from tests.support.js_sdk import js_signed, js_verifies
from tests.support.servers import CardServer


@pytest.fixture(scope="module", params=["EdDSA", "ES256"])
def agent_key(request: pytest.FixtureRequest) -> SigningKey:
    return generate_key(request.param)


def register_js_signed(client: Any, auth: dict[str, str], server: CardServer, key: SigningKey) -> dict[str, Any]:
    jwks_url = server.serve_json("/.well-known/jwks.json", public_jwks([key]))
    server.serve_json("/.well-known/agent-card.json", js_signed(make_card("Travel Agent", url=server.url("/a2a")), key))
    response = client.post("/v1/agents", json={"url": server.base_url, "jwksUrl": jwks_url}, headers=auth)
    assert response.status_code == 201, response.json
    return dict(response.json)


def test_a_card_signed_by_the_js_sdk_is_verified(
    client: Any, auth: dict[str, str], card_server: CardServer, agent_key: SigningKey
) -> None:
    agent = register_js_signed(client, auth, card_server, agent_key)
    assert (agent["signature"]["state"], agent["signature"]["kids"]) == ("verified", [agent_key.kid])
    (check,) = client.get(f"/v1/agents/{agent['id']}/signatures").json["signatures"]
    assert (check["outcome"], check["form"]) == ("valid", "sdk")


def test_endorsed_cards_verify_with_the_js_sdk_before_and_after_keys_rotate(
    client: Any,
    auth: dict[str, str],
    card_server: CardServer,
    agent_key: SigningKey,
    services: Services,
    database_url: str,
) -> None:
    agent_id = register_js_signed(client, auth, card_server, agent_key)["id"]
    before = client.get(f"/v1/agents/{agent_id}/card?endorsed=true").json
    registry_keys = client.get("/.well-known/jwks.json").json
    assert js_verifies(before, registry_keys)  # the registry's signature, the agent's key unknown here
    assert not js_verifies(with_changes(before, description="changed after endorsement"), registry_keys)

    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": services.settings.secret_key}
    assert CliRunner().invoke(cli, ["keys", "rotate"], env=env).exit_code == 0
    services.registry_keys.forget()  # the web process's 5-second key cache, expired
    rotated_keys = client.get("/.well-known/jwks.json").json
    after = client.get(f"/v1/agents/{agent_id}/card?endorsed=true").json
    assert after["signatures"][-1]["protected"] != before["signatures"][-1]["protected"]
    assert js_verifies(before, rotated_keys) and js_verifies(after, rotated_keys)
    assert not js_verifies(after, registry_keys)  # signed with the new key, which clients fetch anew


def test_the_registrys_own_card_verifies_with_the_js_sdk(client: Any) -> None:
    card = client.get("/.well-known/agent-card.json", base_url="https://registry.example").json
    assert card["supportedInterfaces"] and card["protocolVersion"]  # v1.0 with v0.3 compatibility fields
    keys = client.get("/.well-known/jwks.json").json
    assert js_verifies(card, keys)
    assert not js_verifies(card, public_jwks([generate_key("EdDSA")]))
