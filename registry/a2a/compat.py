"""A2A 0.3 at the edge: a 0.3 client's `message/send` parameters read into the v1.0 form the agent
works in, and the v1.0 `Task` written back in the 0.3 form (0.3 spec §6: `kind` discriminators,
lower-case kebab states and roles, file parts under `file`). Only JSON-RPC speaks 0.3 here: the
card's 0.3 `url` is the JSON-RPC endpoint."""

from __future__ import annotations

from typing import Any

from registry.a2a.errors import InvalidParams

ROLES_03 = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_MESSAGE_FIELDS = ("messageId", "contextId", "taskId", "metadata", "referenceTaskIds", "extensions")


def send_params_from_03(params: Any) -> dict[str, Any]:
    """0.3 `MessageSendParams` as a v1.0 `SendMessageRequest`. Raises InvalidParams."""
    if not isinstance(params, dict):
        raise InvalidParams("params must be an object")
    message = params.get("message")
    if not isinstance(message, dict):
        raise InvalidParams("params.message must be an object")
    converted: dict[str, Any] = {"message": message_from_03(message)}
    configuration = params.get("configuration")
    if isinstance(configuration, dict):
        converted["configuration"] = {
            "acceptedOutputModes": configuration.get("acceptedOutputModes"),
            "historyLength": configuration.get("historyLength"),
            "taskPushNotificationConfig": configuration.get("pushNotificationConfig"),
        }
    elif configuration is not None:
        raise InvalidParams("params.configuration must be an object")
    if params.get("metadata") is not None:
        converted["metadata"] = params["metadata"]
    return converted


def message_from_03(message: dict[str, Any]) -> dict[str, Any]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise InvalidParams("message.parts must be a list")
    converted = {field: message[field] for field in _MESSAGE_FIELDS if field in message}
    converted["role"] = ROLES_03.get(str(message.get("role")), "ROLE_USER")
    converted["parts"] = [_part_from_03(part, index) for index, part in enumerate(parts)]
    return converted


def _part_from_03(part: Any, index: int) -> Any:
    if not isinstance(part, dict) or "kind" not in part:
        return part  # read (and refused if need be) as v1.0
    extra = {"metadata": part["metadata"]} if part.get("metadata") is not None else {}
    kind = part["kind"]
    if kind == "text":
        return {"text": part.get("text"), **extra}
    if kind == "data":
        return {"data": part.get("data"), **extra}
    if kind == "file":
        file: dict[str, Any] = part["file"] if isinstance(part.get("file"), dict) else {}
        content = {"raw": file["bytes"]} if "bytes" in file else {"url": file.get("uri", "")}
        return {**content, "mediaType": file.get("mimeType", ""), "filename": file.get("name", ""), **extra}
    raise InvalidParams(f"message.parts[{index}].kind must be text, data or file, not {kind!r}")


def task_to_03(task: dict[str, Any]) -> dict[str, Any]:
    """A v1.0 `Task` in the 0.3 form."""
    status = dict(task["status"])
    status["state"] = state_to_03(status["state"])
    if "message" in status:
        status["message"] = message_to_03(status["message"])
    converted: dict[str, Any] = {"kind": "task", "id": task["id"], "contextId": task["contextId"], "status": status}
    if task.get("artifacts"):
        converted["artifacts"] = [
            {**artifact, "parts": [part_to_03(part) for part in artifact["parts"]]} for artifact in task["artifacts"]
        ]
    if "history" in task:
        converted["history"] = [message_to_03(message) for message in task["history"]]
    if task.get("metadata"):
        converted["metadata"] = task["metadata"]
    return converted


def state_to_03(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` → `input-required`."""
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


def message_to_03(message: dict[str, Any]) -> dict[str, Any]:
    converted = {field: message[field] for field in _MESSAGE_FIELDS if field in message}
    role = "agent" if message.get("role") == "ROLE_AGENT" else "user"
    return {"kind": "message", **converted, "role": role, "parts": [part_to_03(part) for part in message["parts"]]}


def part_to_03(part: dict[str, Any]) -> dict[str, Any]:
    extra = {"metadata": part["metadata"]} if part.get("metadata") else {}
    if "text" in part:
        return {"kind": "text", "text": part["text"], **extra}
    if "data" in part:
        data = part["data"]
        return {"kind": "data", "data": data if isinstance(data, dict) else {"value": data}, **extra}
    file: dict[str, Any] = {"bytes": part["raw"]} if "raw" in part else {"uri": part.get("url", "")}
    if part.get("mediaType"):
        file["mimeType"] = part["mediaType"]
    if part.get("filename"):
        file["name"] = part["filename"]
    return {"kind": "file", "file": file, **extra}
