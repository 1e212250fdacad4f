"""The JSON-RPC endpoint answers every request as JSON-RPC 2.0 says, with the A2A error codes
(A2A v1.0 §9.5, 0.3 §8): a broken body, a wrong envelope, an unknown method, bad params, a method
of the other protocol generation, an operation the card does not declare. Never a 500, never HTML."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.a2a_calls import JSONRPC, V1, rpc, user_message


def post(client: Any, body: bytes | str, headers: dict[str, str] | None = None) -> Any:
    response = client.post(JSONRPC, data=body, headers={"Content-Type": "application/json", **(headers or V1)})
    assert response.status_code == 200 and response.mimetype == "application/json", response.get_data(as_text=True)
    assert response.get_json()["jsonrpc"] == "2.0"
    return response.get_json()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"", -32700),
        (b'{"a": 1, "a": 2}', -32700),  # a member twice: the strict reader refuses it
        (b"\xff\xfe", -32700),
        (b"[]", -32600),  # batches are not supported
        (b'"SendMessage"', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}', -32600),
        (b'{"id": 1, "method": "GetTask", "params": {"id": "x"}}', -32600),
        (b'{"jsonrpc": "2.0", "id": true, "method": "GetTask"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "GetTask"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": ["x"]}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": []}}}', -32602),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": 1}]}}}',
            -32602,
        ),
    ],
)
def test_a_broken_request_is_answered_with_a_jsonrpc_error(client: Any, body: bytes, code: int) -> None:
    answer = post(client, body)
    assert answer["error"]["code"] == code and answer["error"]["message"], answer
    assert "result" not in answer


def test_the_error_keeps_the_requests_id_once_it_could_be_read(client: Any) -> None:
    assert post(client, b'{"jsonrpc": "2.0", "id": "abc", "method": "Nope"}')["id"] == "abc"
    assert post(client, b'{"jsonrpc": "2.0", "id": 42, "method": "GetTask", "params": {"id": "x"}}')["id"] == 42
    assert post(client, b"{broken")["id"] is None


@pytest.mark.parametrize(
    ("method", "version", "code"),
    [
        ("SendStreamingMessage", "1.0", -32004),  # streaming is declared off
        ("SubscribeToTask", "1.0", -32004),
        ("ListTasks", "1.0", -32004),
        ("GetExtendedAgentCard", "1.0", -32004),  # not declared
        ("CreateTaskPushNotificationConfig", "1.0", -32003),
        ("GetTaskPushNotificationConfig", "1.0", -32003),
        ("ListTaskPushNotificationConfigs", "1.0", -32003),
        ("DeleteTaskPushNotificationConfig", "1.0", -32003),
        ("message/stream", None, -32004),
        ("tasks/resubscribe", None, -32004),
        ("tasks/pushNotificationConfig/set", None, -32003),
        ("agent/getAuthenticatedExtendedCard", None, -32004),
    ],
)
def test_operations_the_card_does_not_declare_answer_the_specs_errors(
    client: Any, method: str, version: str | None, code: int
) -> None:
    assert rpc(client, method, {"id": "x"}, version=version)["error"]["code"] == code


def test_the_a2a_version_header_decides_which_methods_answer(client: Any, catalog_ids: dict[str, str]) -> None:
    v1 = {"message": user_message("tag:weather")}
    v03 = {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "fx"}]}}
    assert rpc(client, "SendMessage", v1)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rpc(client, "message/send", v03, version=None)["result"]["status"]["state"] == "completed"
    assert rpc(client, "message/send", v03, version="0.3")["result"]["kind"] == "task"
    # No header is 0.3 (A2A v1.0 §3.6.2): a 1.0 method is then refused, and the other way round.
    refused = rpc(client, "SendMessage", v1, version=None)["error"]
    assert refused["code"] == -32009 and "A2A-Version: 1.0" in refused["message"]
    assert rpc(client, "message/send", v03, version="1.0")["error"]["code"] == -32009
    assert rpc(client, "SendMessage", v1, version="1.0.2")["result"]  # patch versions do not count
    assert rpc(client, "SendMessage", v1, version="2.0")["error"]["code"] == -32009
    assert rpc(client, "SendMessage", v1, version="banana")["error"]["code"] == -32009
    query = client.post(
        f"{JSONRPC}?A2A-Version=1.0", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": v1}
    )
    assert query.get_json()["result"]  # the version as a request parameter (A2A v1.0 §3.6.1)


def test_a_file_part_is_a_content_type_the_agent_does_not_take(client: Any) -> None:
    params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"url": "https://x/y.png"}]}}
    assert rpc(client, "SendMessage", params)["error"]["code"] == -32005
    accepts = {"message": user_message("weather"), "configuration": {"acceptedOutputModes": ["image/png"]}}
    assert rpc(client, "SendMessage", accepts)["error"]["code"] == -32005
    push = {"message": user_message("weather"), "configuration": {"taskPushNotificationConfig": {"url": "https://x"}}}
    assert rpc(client, "SendMessage", push)["error"]["code"] == -32003


def test_an_unknown_task_is_not_found_and_a_query_the_syntax_refuses_is_invalid_params(client: Any) -> None:
    assert rpc(client, "GetTask", {"id": "no-such-task"})["error"]["code"] == -32001
    assert rpc(client, "CancelTask", {"id": "no-such-task"})["error"]["code"] == -32001
    assert rpc(client, "tasks/get", {"id": "no-such-task"}, version=None)["error"]["code"] == -32001
    error = rpc(client, "SendMessage", {"message": user_message("health:sideways")})["error"]
    assert error["code"] == -32602 and "health: takes one of up, degraded, down, unknown" in error["message"]


def test_other_http_methods_and_oversized_bodies_answer_in_jsonrpc_too(client: Any, services: Any) -> None:
    response = client.get(JSONRPC)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.get_json()["error"]["code"] == -32600
    too_big = b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"x": "' + b"a" * 1_100_000 + b'"}}'
    answer = post(client, too_big)
    assert answer["error"]["code"] == -32600 and "over the limit" in answer["error"]["message"]


def test_a_bearer_token_that_is_not_valid_is_refused_with_401(client: Any) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": user_message("weather")}}
    response = client.post(JSONRPC, json=body, headers={**V1, "Authorization": "Bearer not-a-token"})
    assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.get_json()["error"]["data"]["reason"] == "UNAUTHENTICATED"
    assert client.post(JSONRPC, json=body, headers=V1).status_code == 200  # no token: a public search
