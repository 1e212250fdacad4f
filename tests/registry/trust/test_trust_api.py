"""Owners' keys (`/v1/keys`, `jwksUrl`), the signature state on every entry point (upload, import,
push, refresh), the search filter, the operator's trust store and `AGENTDEX_REQUIRE_SIGNATURES`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from registry.app import create_app
from registry.container import Services, build_services
from registry.settings import Settings
from signing import SigningKey, generate_key, private_jwk, public_jwks, sign_card
from tests.conftest import _clear
from tests.support.cards import make_card, with_changes
from tests.support.servers import CardServer

CARD_URL = "https://agent.example.com/.well-known/agent-card.json"


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key("EdDSA")


def upload(client: Any, auth: dict[str, str], card: dict[str, Any], card_url: str = CARD_URL, **extra: str) -> Any:
    return client.post("/v1/agents", json={"card": card, "cardUrl": card_url, **extra}, headers=auth)


def state(client: Any, agent_id: str) -> str:
    return client.get(f"/v1/agents/{agent_id}").json["signature"]["state"]


def test_keys_an_owner_registers_verify_its_uploaded_cards(client: Any, auth: dict[str, str], key: SigningKey) -> None:
    created = client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth)
    assert created.status_code == 201 and created.json["kids"] == [key.kid] and created.json["agentId"] is None
    agent = upload(client, auth, sign_card(make_card("A"), key)).json
    assert agent["signature"]["state"] == "verified" and agent["signature"]["checkedAt"]
    assert client.get(f"/v1/agents/{agent['id']}/signatures").json["signatures"][0]["keySource"] == "owner"
    assert [k["id"] for k in client.get("/v1/keys", headers=auth).json["items"]] == [created.json["id"]]


def test_another_owners_keys_do_not_verify_my_card(
    client: Any, auth: dict[str, str], other_token: str, key: SigningKey
) -> None:
    client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers={"Authorization": f"Bearer {other_token}"})
    assert upload(client, auth, sign_card(make_card("A"), key)).json["signature"]["state"] == "unverifiable"


def test_registering_or_removing_keys_verifies_the_owners_cards_again(
    client: Any, auth: dict[str, str], key: SigningKey
) -> None:
    agent_id = upload(client, auth, sign_card(make_card("A"), key)).json["id"]
    assert state(client, agent_id) == "unverifiable"
    key_id = client.post("/v1/keys", json={"jwks": public_jwks([key]), "agentId": agent_id}, headers=auth).json["id"]
    assert state(client, agent_id) == "verified"
    assert [a["id"] for a in client.get("/v1/agents?signature=verified").json["items"]] == [agent_id]
    assert client.delete(f"/v1/keys/{key_id}", headers=auth).status_code == 204
    assert state(client, agent_id) == "unverifiable"
    assert [a["id"] for a in client.get("/v1/agents?signature=unverifiable").json["items"]] == [agent_id]


@pytest.mark.parametrize(
    "document,needle",
    [
        ({"keys": "nope"}, "JWK Set"),
        ("not a jwks", "JWK Set"),
        ({"keys": []}, "no usable key"),
    ],
)
def test_unusable_jwks_documents_are_refused(client: Any, auth: dict[str, str], document: Any, needle: str) -> None:
    response = client.post("/v1/keys", json={"jwks": document}, headers=auth)
    assert response.status_code == 422 and needle in response.json["error"]["message"]


def test_private_keys_are_refused(client: Any, auth: dict[str, str], key: SigningKey) -> None:
    response = client.post("/v1/keys", json={"jwks": {"keys": [private_jwk(key)]}}, headers=auth)
    assert response.status_code == 422 and "private key material" in response.json["error"]["message"]


def test_only_the_owner_registers_keys_for_an_agent(
    client: Any, auth: dict[str, str], other_token: str, key: SigningKey
) -> None:
    agent_id = upload(client, auth, make_card("A")).json["id"]
    response = client.post(
        "/v1/keys",
        json={"jwks": public_jwks([key]), "agentId": agent_id},
        headers={"Authorization": f"Bearer {other_token}"},
    )
    assert response.status_code == 403
    assert client.post("/v1/keys", json={"jwks": public_jwks([key])}).status_code == 401


def test_every_entry_point_verifies(
    client: Any, auth: dict[str, str], key: SigningKey, card_server: CardServer
) -> None:
    client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth)
    items = [
        {"card": sign_card(make_card(f"I{i}"), key), "cardUrl": f"https://i{i}.example.com/card.json"} for i in range(2)
    ]
    items.append({"card": make_card("Plain"), "cardUrl": "https://plain.example.com/card.json"})
    results = client.post("/v1/agents/import", json={"items": items}, headers=auth).json["results"]
    assert [state(client, r["id"]) for r in results] == ["verified", "verified", "unsigned"]
    pushed = results[2]["id"]
    client.put(f"/v1/agents/{pushed}/card", data=json.dumps(sign_card(make_card("Plain v2"), key)), headers=auth)
    assert state(client, pushed) == "verified"
    card_server.serve_json("/card.json", make_card("Crawled"))
    crawled = client.post("/v1/agents", json={"url": card_server.url("/card.json")}, headers=auth).json["id"]
    card_server.serve_json("/card.json", sign_card(make_card("Crawled v2"), key))
    client.post(f"/v1/agents/{crawled}/refresh", headers=auth)
    assert state(client, crawled) == "verified"
    versions = {v["version"]: v for v in client.get(f"/v1/agents/{crawled}/versions").json["items"]}
    assert set(versions) == {1, 2}
    assert client.get(f"/v1/agents/{crawled}/signatures?version=1").json["state"] == "unsigned"


def test_patching_the_jwks_url_verifies_the_card_again(
    client: Any, auth: dict[str, str], key: SigningKey, card_server: CardServer
) -> None:
    agent_id = upload(client, auth, sign_card(make_card("A"), key)).json["id"]
    jwks_url = card_server.serve_json("/keys.json", public_jwks([key]))
    patched = client.patch(f"/v1/agents/{agent_id}", json={"jwksUrl": jwks_url}, headers=auth)
    assert patched.status_code == 200 and patched.json["signature"]["state"] == "verified"
    assert patched.json["jwksUrl"] == jwks_url
    cleared = client.patch(f"/v1/agents/{agent_id}", json={"jwksUrl": None}, headers=auth).json
    assert (cleared["jwksUrl"], cleared["signature"]["state"]) == (None, "unverifiable")


def test_an_imported_item_names_its_agents_jwks(
    client: Any, auth: dict[str, str], key: SigningKey, card_server: CardServer
) -> None:
    jwks_url = card_server.serve_json("/keys.json", public_jwks([key]))
    items = [
        {
            "card": sign_card(make_card("Own keys"), key),
            "cardUrl": "https://own.example.com/card.json",
            "jwksUrl": jwks_url,
        },
        {"card": sign_card(make_card("No keys"), key), "cardUrl": "https://none.example.com/card.json"},
        {
            "card": make_card("Bad url"),
            "cardUrl": "https://bad.example.com/card.json",
            "jwksUrl": "ftp://k.example.com/j",
        },
        {"card": make_card("Typo"), "cardUrl": "https://typo.example.com/card.json", "jwksURL": jwks_url},
    ]
    body = client.post("/v1/agents/import", json={"items": items}, headers=auth).json
    assert (body["created"], body["failed"]) == (2, 2)
    own, none, bad, typo = body["results"]
    assert client.get(f"/v1/agents/{own['id']}").json["jwksUrl"] == jwks_url
    assert [state(client, own["id"]), state(client, none["id"])] == ["verified", "unverifiable"]
    assert bad["error"]["code"] == "invalid_request" and "jwksUrl" in bad["error"]["message"]
    assert "jwksURL" in typo["error"]["message"]


def test_a_jwks_url_that_is_not_a_url_is_refused(client: Any, auth: dict[str, str]) -> None:
    response = upload(client, auth, make_card("A"), jwksUrl="ftp://keys.example.com/jwks")
    assert response.status_code == 422 and "jwksUrl" in response.json["error"]["message"]


def test_search_by_signature_state(client: Any, auth: dict[str, str], key: SigningKey) -> None:
    client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth)
    signed = sign_card(make_card("Verified"), key)
    tampered = with_changes(signed, description="changed after signing")
    unknown = sign_card(make_card("Unknown"), generate_key("ES256"))
    ids = {
        name: upload(client, auth, card, f"https://{name}.example.com/c.json").json["id"]
        for name, card in {
            "verified": signed,
            "invalid": tampered,
            "unverifiable": unknown,
            "unsigned": make_card("Plain"),
        }.items()
    }
    for wanted, agent_id in ids.items():
        assert [a["id"] for a in client.get(f"/v1/agents?signature={wanted}").json["items"]] == [agent_id]
    assert client.get("/v1/agents?signature=maybe").status_code == 422


@pytest.fixture
def strict_services(settings: Settings, key: SigningKey) -> Iterator[Services]:
    trust = dataclasses.replace(settings.trust, require_signatures=True, trusted_jwks=json.dumps(public_jwks([key])))
    services = build_services(dataclasses.replace(settings, trust=trust))
    _clear(services)
    yield services
    services.close()


def test_required_signatures_refuse_cards_without_a_valid_one(strict_services: Services, key: SigningKey) -> None:
    client = create_app(services=strict_services).test_client()
    auth = {"Authorization": f"Bearer {strict_services.tokens.create('dave', ['agents:write']).token}"}
    for card in (make_card("Plain"), with_changes(sign_card(make_card("T"), key), name="Changed")):
        refused = upload(client, auth, card)
        assert refused.status_code == 422 and refused.json["error"]["code"] == "signature_required"
    accepted = upload(client, auth, sign_card(make_card("Good"), key))  # verified by the operator's trust store
    assert accepted.status_code == 201 and accepted.json["signature"]["state"] == "verified"
    check = client.get(f"/v1/agents/{accepted.json['id']}/signatures").json["signatures"][0]
    assert check["keySource"] == "trust-store"
    pushed = client.put(
        f"/v1/agents/{accepted.json['id']}/card", data=json.dumps(make_card("Unsigned v2")), headers=auth
    )
    assert pushed.status_code == 422
    outcome = client.post(
        "/v1/agents/import", json={"items": [{"card": make_card("X"), "cardUrl": CARD_URL}]}, headers=auth
    ).json
    assert outcome["results"][0]["error"]["code"] == "signature_required"
