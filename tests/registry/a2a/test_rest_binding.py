"""The HTTP+JSON interface: the v1.0 binding's paths, its `google.rpc.Status` errors with the A2A
reason (which the SDK clients map back to the error type) for every path under it, known or not."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.a2a_calls import REST, V1, names, user_message


def error_of(response: Any, status: int, reason: str) -> str:
    assert response.status_code == status and response.mimetype == "application/json", response.get_data(as_text=True)
    error = response.get_json()["error"]
    (info,) = error["details"]
    assert error["code"] == status and info["reason"] == reason and info["domain"] == "a2a-protocol.org"
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    return str(error["message"])


def test_send_get_and_cancel_on_the_bindings_paths(client: Any, catalog_ids: dict[str, str]) -> None:
    sent = client.post(f"{REST}/message:send", json={"message": user_message("tag:fx")}, headers=V1)
    assert sent.status_code == 200 and sent.mimetype == "application/a2a+json"
    task = sent.get_json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and names(task) == ["Currency Agent"]

    read = client.get(f"{REST}/tasks/{task['id']}?historyLength=0", headers=V1)
    assert read.status_code == 200 and read.get_json()["id"] == task["id"] and "history" not in read.get_json()
    assert client.get(f"{REST}/tasks/{task['id']}", headers=V1).get_json()["history"] == task["history"]

    cancel = client.post(f"{REST}/tasks/{task['id']}:cancel", json={"id": task["id"]}, headers=V1)
    assert "over" in error_of(cancel, 400, "TASK_NOT_CANCELABLE")
    error_of(client.get(f"{REST}/tasks/nope", headers=V1), 404, "TASK_NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path", "status", "reason"),
    [
        ("POST", "/message:stream", 400, "UNSUPPORTED_OPERATION"),
        ("GET", "/tasks/abc:subscribe", 400, "UNSUPPORTED_OPERATION"),
        ("POST", "/tasks/abc:subscribe", 400, "UNSUPPORTED_OPERATION"),
        ("GET", "/tasks", 400, "UNSUPPORTED_OPERATION"),
        ("GET", "/extendedAgentCard", 400, "UNSUPPORTED_OPERATION"),
        ("POST", "/tasks/abc/pushNotificationConfigs", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
        ("GET", "/tasks/abc/pushNotificationConfigs/c1", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
        ("DELETE", "/tasks/abc/pushNotificationConfigs/c1", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
        ("GET", "", 404, "METHOD_NOT_FOUND"),
        ("GET", "/nothing/here", 404, "METHOD_NOT_FOUND"),
        ("POST", "/v1/message:send", 404, "METHOD_NOT_FOUND"),  # 0.3's HTTP+JSON paths: not offered
        ("PUT", "/message:send", 405, "METHOD_NOT_FOUND"),
        ("DELETE", "/tasks/abc", 405, "METHOD_NOT_FOUND"),
    ],
)
def test_every_other_path_and_method_answers_in_the_bindings_shape(
    client: Any, method: str, path: str, status: int, reason: str
) -> None:
    response = client.open(f"{REST}{path}", method=method, json={}, headers=V1)
    error_of(response, status, reason)
    if status == 405:
        assert "Allow" in response.headers


def test_the_interface_speaks_10_only_and_says_so(client: Any) -> None:
    body = {"message": user_message("weather")}
    message = error_of(client.post(f"{REST}/message:send", json=body), 400, "VERSION_NOT_SUPPORTED")
    assert "A2A-Version: 1.0" in message  # no header is 0.3 (A2A v1.0 §3.6.2)
    error_of(
        client.post(f"{REST}/message:send", json=body, headers={"A2A-Version": "0.3"}), 400, "VERSION_NOT_SUPPORTED"
    )


def test_bad_bodies_and_queries_are_invalid_arguments(client: Any) -> None:
    def send(data: Any, headers: dict[str, str] | None = None) -> Any:
        return client.post(
            f"{REST}/message:send", data=data, headers={**V1, "Content-Type": "application/json", **(headers or {})}
        )

    error_of(send(b"{broken"), 400, "INVALID_REQUEST")
    error_of(send(b"[1]"), 400, "INVALID_PARAMS")
    assert "sig: takes one of" in error_of(
        send(b'{"message": {"parts": [{"text": "sig:maybe"}]}}'), 400, "INVALID_PARAMS"
    )
    error_of(client.get(f"{REST}/tasks/abc?historyLength=-1", headers=V1), 400, "INVALID_PARAMS")
    error_of(client.get(f"{REST}/tasks/a%00b", headers=V1), 400, "INVALID_PARAMS")  # refused before the view
    refused = send(b'{"message": {"parts": [{"text": "weather"}]}}', {"Authorization": "Bearer wrong"})
    error_of(refused, 401, "UNAUTHENTICATED")
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
