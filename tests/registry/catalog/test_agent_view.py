"""An agent looks the same wherever the API shows it: the answer to its registration,
`GET /v1/agents/{id}` and a search page."""

from __future__ import annotations

from typing import Any

from signing import generate_key, public_jwks, sign_card
from tests.support.cards import make_card


def test_registration_answer_single_read_and_search_page_agree(client: Any, auth: dict[str, str]) -> None:
    key = generate_key("ES256")
    assert client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth).status_code == 201
    card = sign_card(make_card('Ünïcode "quoted" agent', tags=["view"]), key)
    registered = client.post("/v1/agents", json={"card": card, "cardUrl": "https://v.example/card.json"}, headers=auth)
    assert registered.status_code == 201
    shown = client.get(f"/v1/agents/{registered.json['id']}").json
    listed = client.get("/v1/agents?tag=view").json["items"]
    assert registered.json == shown == listed[0]
    assert shown["signature"]["kids"] == [key.kid] and shown["createdAt"].endswith("Z")
