"""An agent looks the same wherever the API shows it: the answer to its registration (rendered in
Python), `GET /v1/agents/{id}` and a search page (rendered by the database)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from sqlalchemy import select, update

from registry.catalog.presenters import agent_json_text
from registry.container import Services
from registry.schema import Agent
from signing import generate_key, public_jwks, sign_card
from tests.support.cards import make_card


def test_registration_answer_single_read_and_search_page_agree(client: Any, auth: dict[str, str]) -> None:
    key = generate_key("ES256")
    assert client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth).status_code == 201
    card = sign_card(make_card("Ünïcode \"quoted\" agent", tags=["view"]), key)
    registered = client.post("/v1/agents", json={"card": card, "cardUrl": "https://v.example/card.json"}, headers=auth)
    assert registered.status_code == 201
    shown = client.get(f"/v1/agents/{registered.json['id']}").json
    listed = client.get("/v1/agents?tag=view").json["items"]
    assert registered.json == shown == listed[0]
    assert shown["signature"]["kids"] == [key.kid] and shown["createdAt"].endswith("Z")


def test_every_live_field_renders_alike_in_python_and_sql(client: Any, auth: dict[str, str], services: Services) -> None:
    agent_id = client.post("/v1/agents", json={"card": make_card("B"), "cardUrl": "https://b.example/card.json"},
                           headers=auth).json["id"]
    checked = dt.datetime(2026, 11, 22, 10, 0, 0, tzinfo=dt.UTC)  # no microseconds: still printed
    with services.engine.begin() as conn:
        conn.execute(update(Agent).where(Agent.id == agent_id).values(
            status="deprecated", status_message='moved to "v2" — see ⟨docs⟩\n', health_state="up",
            health_checked_at=checked, health_latency_ms=12, health_reason="rpc-error", health_uptime24h=0.9583,
            signature_kids=None, jwks_url="https://b.example/jwks.json"))
    shown = client.get(f"/v1/agents/{agent_id}").json
    with services.sessions() as session:
        row = session.scalars(select(Agent).where(Agent.id == agent_id)).one()
        in_python = json.loads(agent_json_text(row))
    assert shown == in_python
    assert shown["health"] == {"state": "up", "checkedAt": "2026-11-22T10:00:00.000000Z", "latencyMs": 12,
                               "reason": "rpc-error", "uptime24h": 0.9583}
    assert (shown["statusMessage"], shown["signature"]["kids"]) == ('moved to "v2" — see ⟨docs⟩\n', [])
