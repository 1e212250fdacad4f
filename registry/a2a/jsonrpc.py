"""The JSON-RPC 2.0 binding (A2A v1.0 §9, and the 0.3 methods on the same endpoint): a request
envelope checked as JSON-RPC 2.0 says, its method run on the agent, every failure answered as a
JSON-RPC error object with the request's id — never an HTML page, never an HTTP error body.

Which generation speaks is the `A2A-Version` header's to say (A2A v1.0 §3.6.2; none means 0.3),
and the method must be of that generation: `SendMessage` with 1.0, `message/send` without the
header or with 0.3 — else VersionNotSupported, as the official SDK's server answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from registry.a2a.agent import RegistryAgent
from registry.a2a.compat import send_params_from_03, task_to_03
from registry.a2a.errors import (
    A2AError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    PushNotificationNotSupported,
    UnsupportedOperation,
    VersionNotSupported,
    from_exception,
    refusing,
)
from registry.a2a.messages import history_length, read_send_request
from registry.a2a.models import MAX_ID
from registry.auth import Actor
from registry.errors import BadRequest
from registry.request_input import parse_json

V1, V03 = "1.0", "0.3"
Caller = Callable[[], Actor | None]  # raises Unauthenticated for a token that is not valid
Handler = Callable[[RegistryAgent, Any, Actor | None], Any]

# What neither binding offers (the card says so), as entries of their tables.
NO_PUSH = refusing(PushNotificationNotSupported, "this agent sends no push notifications")
NO_STREAMING = refusing(UnsupportedOperation, "streaming is off (capabilities.streaming is false): use SendMessage")
NO_EXTENDED_CARD = refusing(UnsupportedOperation, "there is no extended card (capabilities.extendedAgentCard is false)")


def generation(version: str | None) -> str:
    """`1.0` or `0.3` from an `A2A-Version` value (Major.Minor; none is 0.3). Raises VersionNotSupported."""
    parts = (version or "").strip().split(".")
    major_minor = ".".join((parts + ["0"])[:2]) if parts[0] else V03
    if major_minor not in (V1, V03):
        raise VersionNotSupported(f"A2A-Version {version!r} is not supported; this agent speaks 1.0 and 0.3")
    return major_minor


def _task_id(params: Any) -> str:
    if not isinstance(params, dict):
        raise InvalidParams("params must be an object")
    task_id = params.get("id")
    if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_ID:
        raise InvalidParams(f"params.id must be the task's id, a string of 1 to {MAX_ID} characters")
    return task_id


def _send(agent: RegistryAgent, params: Any, caller: Actor | None) -> Any:
    return {"task": agent.send_message(read_send_request(params), caller)}


def _get(agent: RegistryAgent, params: Any, caller: Actor | None) -> Any:
    return agent.get_task(_task_id(params), history_length(params.get("historyLength")), caller)


def _cancel(agent: RegistryAgent, params: Any, caller: Actor | None) -> Any:
    return agent.cancel_task(_task_id(params), caller)


def _send_03(agent: RegistryAgent, params: Any, caller: Actor | None) -> Any:
    return task_to_03(agent.send_message(read_send_request(send_params_from_03(params)), caller))


METHODS: dict[str, tuple[str, Handler]] = {
    "SendMessage": (V1, _send),
    "GetTask": (V1, _get),
    "CancelTask": (V1, _cancel),
    "SendStreamingMessage": (V1, NO_STREAMING),
    "SubscribeToTask": (V1, NO_STREAMING),
    "ListTasks": (V1, refusing(UnsupportedOperation, "this agent lists no tasks: read one with GetTask")),
    "CreateTaskPushNotificationConfig": (V1, NO_PUSH),
    "GetTaskPushNotificationConfig": (V1, NO_PUSH),
    "ListTaskPushNotificationConfigs": (V1, NO_PUSH),
    "DeleteTaskPushNotificationConfig": (V1, NO_PUSH),
    "GetExtendedAgentCard": (V1, NO_EXTENDED_CARD),
    "message/send": (V03, _send_03),
    "tasks/get": (V03, lambda agent, params, caller: task_to_03(_get(agent, params, caller))),
    "tasks/cancel": (V03, lambda agent, params, caller: task_to_03(_cancel(agent, params, caller))),
    "message/stream": (V03, NO_STREAMING),
    "tasks/resubscribe": (V03, NO_STREAMING),
    "tasks/pushNotificationConfig/set": (V03, NO_PUSH),
    "tasks/pushNotificationConfig/get": (V03, NO_PUSH),
    "tasks/pushNotificationConfig/list": (V03, NO_PUSH),
    "tasks/pushNotificationConfig/delete": (V03, NO_PUSH),
    "agent/getAuthenticatedExtendedCard": (V03, NO_EXTENDED_CARD),
}


def answer(
    agent: RegistryAgent, body: bytes, version: str | None, caller: Caller
) -> tuple[dict[str, Any], A2AError | None]:
    """The JSON-RPC response to a request body, and the error it holds, if any (its HTTP status
    is the caller's to choose: 200, or 401 for a token that is not valid)."""
    request_id: str | int | None = None
    try:
        request = _envelope(body)
        request_id = request["id"]
        method, params = _method(request)
        handler = _handler(method, version)
        return {"jsonrpc": "2.0", "id": request_id, "result": handler(agent, params, caller())}, None
    except Exception as error:  # every failure is an answer: an error object, the id kept
        failure = from_exception(error)
        return {"jsonrpc": "2.0", "id": request_id, "error": failure.jsonrpc_error()}, failure


def _envelope(body: bytes) -> dict[str, Any]:
    """The request object (`id` checked, so errors can carry it). Raises ParseError, InvalidRequest."""
    try:
        request = parse_json(body) if body else None
    except BadRequest as error:
        raise ParseError(error.message) from None
    if request is None:
        raise ParseError("the body is empty: send a JSON-RPC 2.0 request object")
    if isinstance(request, list):
        raise InvalidRequest("batch requests are not supported: send one request object")
    if not isinstance(request, dict):
        raise InvalidRequest("the body must be a JSON-RPC 2.0 request object")
    request_id = request.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        raise InvalidRequest("id must be a string, an integer or null")
    return request


def _method(request: dict[str, Any]) -> tuple[str, Any]:
    if request.get("jsonrpc") != "2.0":
        raise InvalidRequest('jsonrpc must be exactly "2.0"')
    method = request.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequest("method must be a non-empty string")
    params = request.get("params", {})
    if not isinstance(params, dict):
        raise InvalidParams("params must be an object (A2A passes parameters by name)")
    return method, params


def _handler(method: str, version: str | None) -> Handler:
    if method not in METHODS:
        raise MethodNotFound(
            f"no method {method!r}; this agent answers SendMessage, GetTask and CancelTask (1.0) "
            "and message/send, tasks/get and tasks/cancel (0.3)"
        )
    speaks, handler = METHODS[method]
    asked = generation(version)
    if speaks != asked:
        header = f"A2A-Version: {speaks}" if speaks == V1 else "no A2A-Version header (or 0.3)"
        raise VersionNotSupported(f"{method} is an A2A {speaks} method, and the request is {asked}: send {header}")
    return handler
