"""The verify-card skill says of a card what the REST API says: the validation report of
`POST /v1/validate` and the signature verdict of the trust service (the one `GET
/v1/agents/{id}/signatures` reports once the card is registered). Nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest

from signing import SigningKey, generate_key, public_jwks, sign_card
from tests.support.a2a_calls import artifact_data, artifact_text, rpc, send, send_error, user_message
from tests.support.cards import make_card
from tests.support.servers import CardServer

CARD = "/.well-known/agent-card.json"


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key("ES256")


def published(card_server: CardServer, key: SigningKey, **card: Any) -> tuple[dict[str, Any], str]:
    """A card signed with `key`, its JWKS on its own origin: (the card, its URL)."""
    jwks = card_server.serve_json("/jwks.json", public_jwks([key]))
    signed = sign_card(make_card("Signed Agent", **card), key, jku=jwks)
    return signed, card_server.serve_json(CARD, signed)


def test_a_card_url_gets_the_validation_report_and_the_signature_verdict_of_the_rest_api(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    signed, url = published(card_server, key)
    task = send(client, f"verify {url}")
    verdict = artifact_data(task)
    assert verdict["validation"] == client.post("/v1/validate", json=signed).get_json()
    assert verdict["cardUrl"] == url and verdict["signature"]["state"] == "verified"
    assert verdict["signature"]["kids"] == [key.kid]
    assert artifact_text(task) == f"The card is valid (A2A 1.0). Signature: verified (key {key.kid})."
    assert client.get("/v1/agents").get_json()["items"] == []  # nothing is stored

    agent = client.post("/v1/agents", json={"url": url}, headers=auth).get_json()
    report = client.get(f"/v1/agents/{agent['id']}/signatures").get_json()
    expected = ("verified", [key.kid], verdict["signature"]["signatures"])
    assert (report["state"], report["kids"], report["signatures"]) == expected


def test_a_card_given_inline_is_judged_the_same_and_its_url_decides_which_keys_count(
    client: Any, card_server: CardServer, key: SigningKey
) -> None:
    signed, url = published(card_server, key)
    with_url = artifact_data(send(client, data={"card": signed, "cardUrl": url}))
    assert with_url["signature"]["state"] == "verified" and with_url["validation"]["valid"]
    # Without its URL the card's jku names no origin the policy trusts: its keys are not fetched.
    without = artifact_data(send(client, data={"card": signed}))
    assert without["signature"]["state"] == "unverifiable" and without["cardUrl"] is None
    bare = artifact_data(send(client, data=make_card("Bare"), metadata={"skill": "verify-card"}))
    assert bare["signature"]["state"] == "unsigned"


def test_an_invalid_or_tampered_card_is_reported_as_such(client: Any, card_server: CardServer, key: SigningKey) -> None:
    signed, url = published(card_server, key)
    tampered = artifact_data(send(client, data={"card": {**signed, "description": "changed"}, "cardUrl": url}))
    assert tampered["signature"]["state"] == "invalid"
    broken = {"name": "Half a card"}
    task = send(client, data={"card": broken})
    assert artifact_data(task)["validation"] == client.post("/v1/validate", json=broken).get_json()
    assert not artifact_data(task)["validation"]["valid"] and "NOT valid" in artifact_text(task)


def test_a_card_that_cannot_be_fetched_fails_the_task_and_a_refused_url_is_invalid_params(
    client: Any, card_server: CardServer
) -> None:
    missing = send(client, f"verify {card_server.url('/nowhere')}")
    assert missing["status"]["state"] == "TASK_STATE_FAILED" and "artifacts" not in missing
    assert "could not be fetched" in missing["status"]["message"]["parts"][0]["text"]
    refused = send_error(client, data={"url": "ftp://agent.example.com"})
    assert refused["code"] == -32602
    params = {"message": user_message(data={"card": "not an object"}), "metadata": {"skill": "verify-card"}}
    assert rpc(client, "SendMessage", params)["error"]["code"] == -32602
