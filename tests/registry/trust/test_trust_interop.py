"""Interoperability with the official a2a-sdk (PyPI) as a real peer, over real HTTP on loopback:
a card the SDK signed with a key in the agent's own JWKS comes out `verified`; the registry's
endorsed card verifies with the SDK's verifier using `/.well-known/jwks.json`, before and after
`agentdex keys rotate`."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from cli.main import cli
from registry.container import Services
from registry.schema import CardEndorsement
from registry.settings import Settings
from signing import SigningKey, generate_key, public_jwks
from tests.registry.trust.trust_helpers import sdk_signed, sdk_verify
from tests.support.cards import make_card
from tests.support.servers import CardServer


@pytest.fixture(scope="module")
def agent_key() -> SigningKey:
    return generate_key("ES256")


def publish_agent(server: CardServer, key: SigningKey, *, jku: bool = True) -> dict[str, Any]:
    """An agent on loopback: its JWKS and its card, signed by the SDK (with `jku` to that JWKS)."""
    jwks_url = server.serve_json("/.well-known/jwks.json", public_jwks([key]))
    card = sdk_signed(make_card("Weather Agent", url=server.url("/a2a")), key, **({"jku": jwks_url} if jku else {}))
    server.serve_json("/.well-known/agent-card.json", card)
    return card


def register(client: Any, auth: dict[str, str], **body: str) -> dict[str, Any]:
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def test_a_card_signed_by_the_sdk_with_a_key_in_its_own_jwks_is_verified(
    client: Any, auth: dict[str, str], card_server: CardServer, agent_key: SigningKey
) -> None:
    publish_agent(card_server, agent_key)
    agent = register(client, auth, url=card_server.base_url)
    assert agent["signature"]["state"] == "verified" and agent["signature"]["kids"] == [agent_key.kid]
    (check,) = client.get(f"/v1/agents/{agent['id']}/signatures").json["signatures"]
    assert check["outcome"] == "valid" and check["form"] == "sdk"
    assert check["keySource"] == f"jwks:{card_server.url('/.well-known/jwks.json')}"
    found = client.get("/v1/agents?signature=verified").json["items"]
    assert [a["id"] for a in found] == [agent["id"]]
    assert client.get("/v1/agents?signature=unverifiable").json["items"] == []


def test_without_jku_the_agents_own_jwks_url_verifies_it(
    client: Any, auth: dict[str, str], card_server: CardServer, agent_key: SigningKey
) -> None:
    publish_agent(card_server, agent_key, jku=False)
    jwks_url = card_server.url("/.well-known/jwks.json")
    agent = register(client, auth, url=card_server.base_url, jwksUrl=jwks_url)
    assert (agent["signature"]["state"], agent["jwksUrl"]) == ("verified", jwks_url)


def endorsed(client: Any, agent_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/agents/{agent_id}/card?endorsed=true")
    assert response.status_code == 200, response.json
    return response.json


def registry_jwks(client: Any) -> dict[str, Any]:
    return client.get("/.well-known/jwks.json").json


def test_the_endorsed_card_verifies_with_the_sdk_before_and_after_keys_rotate(
    client: Any,
    auth: dict[str, str],
    card_server: CardServer,
    agent_key: SigningKey,
    services: Services,
    database_url: str,
) -> None:
    publish_agent(card_server, agent_key)
    agent_id = register(client, auth, url=card_server.base_url)["id"]
    before = endorsed(client, agent_id)
    ours = before["signatures"][-1]
    assert ours["header"]["agentdex"]["signature"]["state"] == "verified"
    assert ours["header"]["agentdex"]["fetchedFrom"] == card_server.url("/.well-known/agent-card.json")
    sdk_verify(before, registry_jwks(client))

    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": services.settings.secret_key}
    rotated = CliRunner().invoke(cli, ["keys", "rotate", "--json"], env=env)
    assert rotated.exit_code == 0, rotated.output
    services.registry_keys.forget()  # the web process's 5-second key cache, expired
    jwks = registry_jwks(client)
    assert len(jwks["keys"]) == 2  # the retired key stays published for the grace period
    sdk_verify(before, jwks)  # what clients already hold keeps verifying
    after = endorsed(client, agent_id)
    assert after["signatures"][-1]["protected"] != ours["protected"]  # re-endorsed with the new key
    sdk_verify(after, jwks)


@pytest.fixture
def public_settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, public_url="http://localhost")


def test_with_a_public_url_the_endorsement_is_made_and_stored_at_registration(
    public_settings: Settings, card_server: CardServer, agent_key: SigningKey
) -> None:
    from registry.app import create_app
    from registry.container import build_services
    from tests.conftest import _clear

    services = build_services(public_settings)
    _clear(services)
    try:
        client = create_app(services=services).test_client()
        token = services.tokens.create("alice", ["agents:write"]).token
        publish_agent(card_server, agent_key)
        agent_id = register(client, {"Authorization": f"Bearer {token}"}, url=card_server.base_url)["id"]
        with services.sessions() as session:
            row = session.scalars(select(CardEndorsement)).one()
        assert row.jku == "http://localhost/.well-known/jwks.json"
        card = endorsed(client, agent_id)
        assert card["signatures"][-1] == row.entry  # served as stored, not signed again
        sdk_verify(card, registry_jwks(client))
    finally:
        services.close()
