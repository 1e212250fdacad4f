"""What a client is told when its JSON is refused: the limit, or the path of the place, in the
message and in `details`, and nothing stored (issue 29)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from registry.schema import Agent, RelayMessage
from tests.support.cards import make_card


def count(services: Any, model: Any) -> int:
    with services.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(model)))


def test_validate_refuses_1025_nested_arrays_without_a_token(client: Any) -> None:
    response = client.post("/v1/validate", data=b"[" * 1_025 + b"]" * 1_025, content_type="application/json")
    assert response.status_code == 400
    error = response.json["error"]
    assert error["code"] == "json_too_deep" and "at most 64" in error["message"]
    assert error["details"] == {"path": "$", "limit": 64}


def test_a_card_of_64_levels_is_still_judged(client: Any) -> None:
    card = make_card("Deep Extension")
    card["capabilities"]["extensions"] = [
        {"uri": "https://x.example/ext", "params": {"p": json.loads("[" * 59 + "]" * 59)}}
    ]
    response = client.post("/v1/validate", json=card)
    assert response.status_code == 200, response.json


def test_register_refuses_a_lone_surrogate_naming_its_path(client: Any, auth: dict[str, str], services: Any) -> None:
    card = json.dumps(make_card("Surrogate")).replace('"Surrogate skill 0"', '"skill \\ud800"')
    body = '{"card": ' + card + ', "cardUrl": "https://surrogate.example/card.json"}'
    response = client.post("/v1/agents", data=body, content_type="application/json", headers=auth)
    assert response.status_code == 400
    error = response.json["error"]
    assert error["code"] == "invalid_unicode" and error["details"]["path"] == "$.card.skills[0].name"
    assert "$.card.skills[0].name" in error["message"] and "unpaired UTF-16 surrogate" in error["message"]
    assert count(services, Agent) == 0


def test_a_pushed_card_with_a_lone_surrogate_leaves_the_agent_as_it_was(client: Any, auth: dict[str, str]) -> None:
    created = client.post(
        "/v1/agents", json={"card": make_card("Pushed"), "cardUrl": "https://pushed.example/card.json"}, headers=auth
    )
    agent_id = created.json["id"]
    card = json.dumps(make_card("Pushed", description="new")).replace('"Pushed skill 0"', '"\\udfff"')
    response = client.put(f"/v1/agents/{agent_id}/card", data=card, content_type="application/json", headers=auth)
    assert response.status_code == 400 and response.json["error"]["details"]["path"] == "$.skills[0].name"
    assert client.get(f"/v1/agents/{agent_id}/versions").json["items"][0]["version"] == 1
    assert client.get(f"/v1/agents/{agent_id}").json["description"] == "Pushed answers questions"


def test_an_import_with_one_unreadable_item_names_it_and_imports_none(
    client: Any, auth: dict[str, str], services: Any
) -> None:
    items = [
        json.dumps({"card": make_card(f"Bulk {i}"), "cardUrl": f"https://bulk{i}.example/card.json"}) for i in range(3)
    ]
    items[1] = items[1].replace('"Bulk 1 skill 0"', '"\\ud800"')
    response = client.post(
        "/v1/agents/import", data='{"items": [' + ",".join(items) + "]}", content_type="application/json", headers=auth
    )
    assert response.status_code == 400
    assert response.json["error"]["details"]["path"] == "$.items[1].card.skills[0].name"
    assert count(services, Agent) == 0


def test_a_card_that_repeats_its_name_is_refused_naming_the_member(client: Any, auth: dict[str, str]) -> None:
    card = json.dumps(make_card("Real Name"))
    body = '{"cardUrl": "https://dup.example/card.json", "card": {"name": "Impostor", ' + card[1:] + "}"
    response = client.post("/v1/agents", data=body, content_type="application/json", headers=auth)
    assert response.status_code == 400
    error = response.json["error"]
    assert error["code"] == "duplicate_member" and error["details"] == {"path": "$.card.name", "member": "name"}
    assert 'the member name "name" appears more than once at $.card.name' in error["message"]


def test_the_relay_refuses_a_lone_surrogate_task_id_and_stores_nothing(
    client: Any, auth: dict[str, str], services: Any
) -> None:
    relay = {"Authorization": f"Bearer {services.tokens.create('client', ['relay']).token}"}
    card = make_card("Pusher", url="https://push.example/a2a", push=True)
    agent = client.post("/v1/agents", json={"card": card, "cardUrl": "https://push.example/card.json"}, headers=auth)
    sub = client.post(
        "/v1/relay/subscriptions",
        json={"agentId": agent.json["id"], "targetUrl": "http://127.0.0.1:9/h"},
        headers=relay,
    ).json
    body = b'{"statusUpdate": {"taskId": "task-\\ud800", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}'
    response = client.post(
        f"/relay/{sub['id']}",
        data=body,
        content_type="application/json",
        headers={"X-A2A-Notification-Token": sub["relayToken"]},
    )
    assert response.status_code == 400
    assert response.json["error"]["details"]["path"] == "$.statusUpdate.taskId"
    assert count(services, RelayMessage) == 0
