"""The registry's card tells the truth: every interface it lists answers a find-agents message in
its binding and protocol version, on a real server on loopback, at the URLs the card gives."""

from __future__ import annotations

import uuid
from typing import Any

import requests

from tests.support.a2a_peers import seed_catalog


def call_jsonrpc_10(url: str, text: str) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer = requests.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=10).json()
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    return next(part["data"] for part in task["artifacts"][0]["parts"] if "data" in part)


def call_jsonrpc_03(url: str, text: str) -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    task = requests.post(url, json=body, timeout=10).json()["result"]  # a 0.3 client sends no A2A-Version
    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    return next(part["data"] for part in task["artifacts"][0]["parts"] if part["kind"] == "data")


def call_http_json_10(url: str, text: str) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    response = requests.post(
        f"{url}/message:send", json={"message": message}, headers={"A2A-Version": "1.0"}, timeout=10
    )
    task = response.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    return next(part["data"] for part in task["artifacts"][0]["parts"] if "data" in part)


CALLS = {
    ("JSONRPC", "1.0"): call_jsonrpc_10,
    ("JSONRPC", "0.3"): call_jsonrpc_03,
    ("HTTP+JSON", "1.0"): call_http_json_10,
}


def test_every_interface_the_card_lists_answers(registry_url: str, client: Any, auth: dict[str, str]) -> None:
    seed_catalog(client, auth)
    card = requests.get(f"{registry_url}/.well-known/agent-card.json", timeout=10).json()
    listed = [(i["protocolBinding"], i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]]
    assert {(binding, version) for binding, version, _ in listed} == set(CALLS)  # no interface untested
    for binding, version, url in listed:
        assert url.startswith(registry_url)
        found = CALLS[(binding, version)](url, "tag:translation")
        assert [agent["name"] for agent in found["agents"]] == ["Translator Agent"], (binding, version)
    # The 0.3 fields name the JSON-RPC endpoint, as a 0.3 client reads them.
    assert call_jsonrpc_03(card["url"], "tag:weather")["agents"][0]["name"] == "Weather Agent"
    assert card["preferredTransport"] == "JSONRPC"
