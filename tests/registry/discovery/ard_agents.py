"""Agents in a registry for the ARD API tests: registered through the REST API with cards that say
what they do, their health and signature states set as the health checks and trust would."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select, update

from registry.catalog import Agent, AgentTerm
from tests.support.cards import make_card

ARD_NS = "https://agenticresourcediscovery.org/ns#"


def agent_card(name: str, description: str, skill: str, tags: list[str], **changes: Any) -> dict[str, Any]:
    """A card whose name, skill name, tags and description each say only what they are given."""
    card = make_card(name, description=description, tags=tags)
    card["skills"][0].update(name=skill, description="Helps people", examples=[])
    return {**card, **changes}


def register(client, auth, card: dict[str, Any], card_url: str) -> str:  # type: ignore[no-untyped-def]
    response = client.post("/v1/agents", json={"card": card, "cardUrl": card_url}, headers=auth)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def set_state(
    services,
    agent_id: str,
    *,
    health: str | None = None,
    down_since: dt.timedelta | None = None,
    signature: str | None = None,
) -> None:  # type: ignore[no-untyped-def]
    """The agent's rolled-up health (down for `down_since`) or signature state, as the health
    checks and the trust service record them."""
    values: dict[str, Any] = {}
    if health is not None:
        values.update(health_state=health, health_since=dt.datetime.now(dt.UTC) - (down_since or dt.timedelta()))
    if signature is not None:
        values["signature_state"] = signature
    with services.engine.begin() as conn:
        conn.execute(update(Agent).where(Agent.id == agent_id).values(**values))
        if signature is not None:  # the term the signature filter finds it by, as trust writes it
            pk = select(Agent.pk).where(Agent.id == agent_id).scalar_subquery()
            conn.execute(
                update(AgentTerm).where(AgentTerm.agent_pk == pk, AgentTerm.kind == "sig").values(value=signature)
            )


def search(client, body: dict[str, Any], **headers: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = client.post("/ard/search", json=body, headers=headers)
    assert response.status_code == 200, response.json
    return dict(response.json)


def names(body: dict[str, Any]) -> list[str]:
    return [result["displayName"] for result in body["results"]]


def refusal(response) -> str:  # type: ignore[no-untyped-def]
    """The message of an ARD refusal: 400 INVALID_ARGUMENT in ARD's envelope."""
    assert response.status_code == 400, (response.status_code, response.get_data(as_text=True))
    assert response.json["errorCode"] == "INVALID_ARGUMENT", response.json
    assert set(response.json) == {"errorCode", "message"}
    return str(response.json["message"])
