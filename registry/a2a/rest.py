"""The HTTP+JSON binding of A2A v1.0 (§11): `POST /message:send`, `GET /tasks/{id}`,
`POST /tasks/{id}:cancel` under the interface's URL, the other operations of the binding answered
with the error the spec gives them, and any other path with METHOD_NOT_FOUND — always as a
`google.rpc.Status` body with an `ErrorInfo` reason, which the SDK clients map back to the error.
This interface is 1.0 only (the card lists no 0.3 HTTP+JSON interface)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from registry.a2a.agent import RegistryAgent
from registry.a2a.errors import (
    A2AError,
    InvalidParams,
    MethodNotFound,
    ParseError,
    UnsupportedOperation,
    VersionNotSupported,
    from_exception,
    refusing,
)
from registry.a2a.jsonrpc import NO_EXTENDED_CARD, NO_PUSH, NO_STREAMING, V1, Caller, generation
from registry.a2a.messages import history_length, read_send_request
from registry.a2a.models import MAX_ID
from registry.auth import Actor
from registry.errors import BadRequest
from registry.request_input import parse_json


@dataclasses.dataclass(frozen=True)
class RestRequest:
    method: str
    path: str  # below the interface's URL, e.g. "/tasks/abc:cancel"
    body: bytes
    args: dict[str, str]
    version: str | None


@dataclasses.dataclass(frozen=True)
class RestAnswer:
    status: int
    body: dict[str, Any]
    error: A2AError | None = None
    allow: str | None = None  # for a 405


Operation = Callable[[RegistryAgent, RestRequest, str, Actor | None], dict[str, Any]]


class MethodNotAllowed(MethodNotFound):
    http_status, status = 405, "UNIMPLEMENTED"


def answer(agent: RegistryAgent, request: RestRequest, caller: Caller) -> RestAnswer:
    try:
        operation, task_id = _route(request)
        if generation(request.version) != V1:
            raise VersionNotSupported("this HTTP+JSON interface speaks A2A 1.0: send the header A2A-Version: 1.0")
        return RestAnswer(200, operation(agent, request, task_id, caller()))
    except Exception as error:
        failure = from_exception(error)
        allow = _allowed(request.path) if isinstance(failure, MethodNotAllowed) else None
        return RestAnswer(failure.http_status, failure.rest_error(), failure, allow)


def _body(request: RestRequest) -> dict[str, Any]:
    try:
        body = parse_json(request.body) if request.body else {}
    except BadRequest as error:
        raise ParseError(error.message) from None
    if not isinstance(body, dict):
        raise InvalidParams("the body must be a JSON object")
    return body


def _send(agent: RegistryAgent, request: RestRequest, task_id: str, caller: Actor | None) -> dict[str, Any]:
    return {"task": agent.send_message(read_send_request(_body(request)), caller)}


def _get(agent: RegistryAgent, request: RestRequest, task_id: str, caller: Actor | None) -> dict[str, Any]:
    return agent.get_task(task_id, history_length(request.args.get("historyLength")), caller)


def _cancel(agent: RegistryAgent, request: RestRequest, task_id: str, caller: Actor | None) -> dict[str, Any]:
    _body(request)  # a CancelTaskRequest, whose id the path gives
    return agent.cancel_task(task_id, caller)


# (path shape, HTTP method) → operation; `{id}` is a task id.
ROUTES: dict[tuple[str, str], Operation] = {
    ("/message:send", "POST"): _send,
    ("/message:stream", "POST"): NO_STREAMING,
    ("/tasks/{id}", "GET"): _get,
    ("/tasks/{id}:cancel", "POST"): _cancel,
    ("/tasks/{id}:subscribe", "GET"): NO_STREAMING,
    ("/tasks/{id}:subscribe", "POST"): NO_STREAMING,
    ("/tasks", "GET"): refusing(UnsupportedOperation, "this agent lists no tasks: read one with GET /tasks/{id}"),
    ("/tasks/{id}/pushNotificationConfigs", "GET"): NO_PUSH,
    ("/tasks/{id}/pushNotificationConfigs", "POST"): NO_PUSH,
    ("/tasks/{id}/pushNotificationConfigs/{config}", "GET"): NO_PUSH,
    ("/tasks/{id}/pushNotificationConfigs/{config}", "DELETE"): NO_PUSH,
    ("/extendedAgentCard", "GET"): NO_EXTENDED_CARD,
}


def _shape(path: str) -> tuple[str, str]:
    """The route shape of a path, and the task id in it ("" if none)."""
    if not path.startswith("/tasks/"):
        return path, ""
    rest = path[len("/tasks/") :]
    task_id, slash, below = rest.partition("/")
    for verb in (":cancel", ":subscribe"):
        if not slash and task_id.endswith(verb):
            return "/tasks/{id}" + verb, task_id[: -len(verb)]
    if not slash:
        return "/tasks/{id}", task_id
    if below == "pushNotificationConfigs":
        return "/tasks/{id}/pushNotificationConfigs", task_id
    if below.startswith("pushNotificationConfigs/") and "/" not in below[len("pushNotificationConfigs/") :]:
        return "/tasks/{id}/pushNotificationConfigs/{config}", task_id
    return path, task_id


def _route(request: RestRequest) -> tuple[Operation, str]:
    shape, task_id = _shape(request.path)
    operation = ROUTES.get((shape, request.method))
    if operation is None:
        if any(known == shape for known, _ in ROUTES):
            raise MethodNotAllowed(f"{request.method} is not how {request.path} is called")
        raise MethodNotFound(f"no A2A operation at {request.path}; see the HTTP+JSON binding of A2A 1.0")
    if shape.startswith("/tasks/{id}") and not 0 < len(task_id) <= MAX_ID:
        raise InvalidParams(f"the task id in the path must be 1 to {MAX_ID} characters")
    return operation, task_id


def _allowed(path: str) -> str:
    shape, _ = _shape(path)
    return ", ".join(method for known, method in ROUTES if known == shape)
