"""register-agent lists an agent for a caller with an Agentdex token (agents:write), as
`POST /v1/agents` does; without one the task stops in auth-required, and a message with the
task's id and a token carries it through. What the catalog refuses fails the task, saying why."""

from __future__ import annotations

from typing import Any

from tests.support.a2a_calls import REST, V1, artifact_data, rpc, send, user_message
from tests.support.cards import make_card
from tests.support.servers import CardServer

CARD = "/.well-known/agent-card.json"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def status_text(task: dict[str, Any]) -> str:
    return str(task["status"]["message"]["parts"][0]["text"])


def test_without_a_token_the_task_asks_for_one_and_goes_on_with_it(
    client: Any, card_server: CardServer, writer_token: str
) -> None:
    url = card_server.serve_json(CARD, make_card("Listed Agent", tags=["listed"]))
    waiting = send(client, f"register {card_server.base_url}")
    assert waiting["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    assert "agents:write" in status_text(waiting) and "Authorization: Bearer" in status_text(waiting)
    assert waiting["status"]["message"]["parts"][1]["data"]["securityScheme"] == "agentdexToken"
    assert client.get("/v1/agents?tag=listed").get_json()["items"] == []

    go_on = user_message("here is my token", taskId=waiting["id"], contextId=waiting["contextId"])
    done = rpc(client, "SendMessage", {"message": go_on}, headers=bearer(writer_token))["result"]["task"]
    assert (done["id"], done["status"]["state"]) == (waiting["id"], "TASK_STATE_COMPLETED")
    agent = artifact_data(done)
    assert agent["name"] == "Listed Agent" and agent["cardUrl"] == url
    assert [a["id"] for a in client.get("/v1/agents?tag=listed").get_json()["items"]] == [agent["id"]]
    assert [m["parts"][0]["text"] for m in done["history"]] == [f"register {card_server.base_url}", "here is my token"]
    # The task is now the token holder's.
    assert rpc(client, "GetTask", {"id": done["id"]})["error"]["code"] == -32001
    assert rpc(client, "GetTask", {"id": done["id"]}, headers=bearer(writer_token))["result"] == done


def test_a_token_without_the_scope_is_asked_for_a_better_one(
    client: Any, services: Any, card_server: CardServer
) -> None:
    relay_only = services.tokens.create("carol", ["relay"]).token
    task = send(client, f"register {card_server.base_url}", headers=bearer(relay_only))
    assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED" and "this token lacks" in status_text(task)


def test_a_data_part_registers_when_the_message_names_the_skill(
    client: Any, card_server: CardServer, writer_token: str
) -> None:
    url = card_server.serve_json(CARD, make_card("Data Agent"))
    body = {"message": user_message(data={"url": url}), "metadata": {"skill": "register-agent"}}
    response = client.post(f"{REST}/message:send", json=body, headers={**V1, **bearer(writer_token)})
    assert response.status_code == 200 and artifact_data(response.get_json()["task"])["name"] == "Data Agent"
    # Without the skill named, a URL in a data part is only verified: registering is never guessed.
    verified = send(client, data={"url": url}, headers=bearer(writer_token))
    assert verified["metadata"] == {"skill": "verify-card"}


def test_what_the_catalog_refuses_fails_the_task_saying_why(
    client: Any, card_server: CardServer, writer_token: str
) -> None:
    card_server.serve_json(CARD, make_card("Twice"))
    first = send(client, f"register {card_server.base_url}", headers=bearer(writer_token))
    assert first["status"]["state"] == "TASK_STATE_COMPLETED"
    again = send(client, f"register {card_server.base_url}", headers=bearer(writer_token))
    assert again["status"]["state"] == "TASK_STATE_FAILED" and "Not registered" in status_text(again)
    assert again["status"]["message"]["parts"][1]["data"]["error"]["code"] == "conflict"

    bad = card_server.serve_json("/bad/agent-card.json", {"name": "Half a card"})
    invalid = send(client, f"register {bad}", headers=bearer(writer_token))
    assert invalid["status"]["state"] == "TASK_STATE_FAILED"
    assert invalid["status"]["message"]["parts"][1]["data"]["error"]["details"]["issues"]


def test_a_waiting_task_can_be_canceled_and_a_finished_one_takes_no_more_messages(
    client: Any, card_server: CardServer
) -> None:
    waiting = send(client, f"register {card_server.base_url}")
    canceled = rpc(client, "CancelTask", {"id": waiting["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert rpc(client, "CancelTask", {"id": waiting["id"]})["error"]["code"] == -32002
    go_on = {"message": user_message("and now?", taskId=waiting["id"])}
    assert rpc(client, "SendMessage", go_on)["error"]["code"] == -32004  # UnsupportedOperation (A2A v1.0 §3.1.1)
    unknown = {"message": user_message("hello", taskId="no-such-task")}
    assert rpc(client, "SendMessage", unknown)["error"]["code"] == -32001
    other = send(client, f"register {card_server.base_url}")
    wrong_context = {"message": user_message("x", taskId=other["id"], contextId="another-context")}
    assert rpc(client, "SendMessage", wrong_context)["error"]["code"] == -32602
