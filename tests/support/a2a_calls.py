"""Calls to the registry's own A2A agent through the Flask test client, by hand: for what no SDK
client sends (broken envelopes, wrong versions) and for the tests of the skills themselves."""

from __future__ import annotations

import uuid
from typing import Any

JSONRPC, REST = "/a2a/jsonrpc", "/a2a/rest"
V1 = {"A2A-Version": "1.0"}


def user_message(text: str | None = None, data: Any = None, **fields: Any) -> dict[str, Any]:
    """A v1.0 `Message` of one text part, or one data part."""
    part = {"text": text} if text is not None else {"data": data}
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [part], **fields}


def rpc(client: Any, method: str, params: Any, *, version: str | None = "1.0", headers: Any = None) -> Any:
    """The JSON-RPC response object (the HTTP status is asserted 200)."""
    sent = {**({"A2A-Version": version} if version else {}), **(headers or {})}
    response = client.post(JSONRPC, json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params}, headers=sent)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def send(client: Any, text: str | None = None, data: Any = None, headers: Any = None, **params: Any) -> dict[str, Any]:
    """SendMessage over JSON-RPC; the task (an error fails the test)."""
    answer = rpc(client, "SendMessage", {"message": user_message(text, data), **params}, headers=headers)
    assert "result" in answer, answer
    return dict(answer["result"]["task"])


def send_error(client: Any, text: str | None = None, data: Any = None, **params: Any) -> dict[str, Any]:
    """SendMessage over JSON-RPC that the agent refuses; the error object."""
    answer = rpc(client, "SendMessage", {"message": user_message(text, data), **params})
    assert "error" in answer, answer
    return dict(answer["error"])


def artifact_data(task: dict[str, Any]) -> Any:
    (artifact,) = task["artifacts"]
    return next(part["data"] for part in artifact["parts"] if "data" in part)


def artifact_text(task: dict[str, Any]) -> str:
    (artifact,) = task["artifacts"]
    return str(next(part["text"] for part in artifact["parts"] if "text" in part))


def names(task: dict[str, Any]) -> list[str]:
    return [agent["name"] for agent in artifact_data(task)["agents"]]
