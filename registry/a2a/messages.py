"""A2A v1.0's objects as JSON (the ProtoJSON form both bindings carry, A2A v1.0 §4): reading a
`SendMessageRequest` a client sent, and building the `Task`, `Message`, `Artifact` and `Part`
objects the agent answers with. One form inside the agent; the 0.3 form is made at the edge
(`registry.a2a.compat`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from registry.a2a.errors import ContentTypeNotSupported, InvalidParams, PushNotificationNotSupported
from registry.a2a.models import MAX_ID

# A2A v1.0 §4.1.3 TaskState, and the states no message or cancel can change (§3.1.5).
SUBMITTED, WORKING, COMPLETED = "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"
FAILED, CANCELED, REJECTED = "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"
INPUT_REQUIRED, AUTH_REQUIRED = "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
USER, AGENT = "ROLE_USER", "ROLE_AGENT"
TEXT, JSON = "text/plain", "application/json"
OUTPUT_MODES = (JSON, TEXT)  # what the agent's artifacts hold: a data part, then a text part
INPUT_MODES = (TEXT, JSON)
_PART_CONTENT = ("text", "data", "raw", "url")


@dataclasses.dataclass(frozen=True)
class IncomingMessage:
    """The user's message: its text and data parts in order, and the ids it names."""

    raw: dict[str, Any]  # as kept in the task's history
    texts: tuple[str, ...]
    data: tuple[Any, ...]
    task_id: str | None
    context_id: str | None
    metadata: dict[str, Any]

    @property
    def text(self) -> str:
        return " ".join(text.strip() for text in self.texts if text.strip())


@dataclasses.dataclass(frozen=True)
class SendRequest:
    message: IncomingMessage
    accepted_output_modes: tuple[str, ...]
    history_length: int | None
    metadata: dict[str, Any]


def read_send_request(params: Any) -> SendRequest:
    """A v1.0 `SendMessageRequest`. Raises InvalidParams, ContentTypeNotSupported (a file part:
    the skills take text and JSON), PushNotificationNotSupported (a push config: none is declared)."""
    params = _object(params, "params")
    configuration = _object(params.get("configuration") or {}, "configuration")
    if configuration.get("taskPushNotificationConfig"):
        raise PushNotificationNotSupported("this agent sends no push notifications (capabilities.pushNotifications)")
    return SendRequest(
        message=read_message(params.get("message")),
        accepted_output_modes=tuple(_strings(configuration.get("acceptedOutputModes"), "acceptedOutputModes")),
        history_length=history_length(configuration.get("historyLength")),
        metadata=_object(params.get("metadata") or {}, "metadata"),
    )


def read_message(value: Any) -> IncomingMessage:
    message = _object(value, "message")
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise InvalidParams("message.parts must be a non-empty list: a text part, or a data part")
    texts, data = [], []
    for index, part in enumerate(parts):
        kind = _part_kind(part, index)
        if kind == "text":
            texts.append(part["text"])
        else:
            data.append(part["data"])
    return IncomingMessage(
        raw=message,
        texts=tuple(texts),
        data=tuple(data),
        task_id=_id(message.get("taskId"), "message.taskId"),
        context_id=_id(message.get("contextId"), "message.contextId"),
        metadata=_object(message.get("metadata") or {}, "message.metadata"),
    )


def _part_kind(part: Any, index: int) -> str:
    if not isinstance(part, dict):
        raise InvalidParams(f"message.parts[{index}] must be an object")
    kinds = [key for key in _PART_CONTENT if key in part]
    if len(kinds) != 1:
        raise InvalidParams(f"message.parts[{index}] must hold exactly one of text, data, raw, url")
    if kinds[0] in ("raw", "url"):
        raise ContentTypeNotSupported(f"message.parts[{index}]: this agent takes text and JSON data, not files")
    if kinds[0] == "text" and not isinstance(part["text"], str):
        raise InvalidParams(f"message.parts[{index}].text must be a string")
    return kinds[0]


def history_length(value: Any) -> int | None:
    """A2A v1.0 §3.2.4: unset is all of it, 0 none, N the last N. Raises InvalidParams."""
    if value is None:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)  # ProtoJSON writes no int32 as a string, but may read one
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidParams("historyLength must be a whole number, 0 or more")
    return value


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParams(f"{name} must be an object")
    return value


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidParams(f"{name} must be a list of strings")
    return value


def _id(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_ID:
        raise InvalidParams(f"{name} must be a string of at most {MAX_ID} characters")
    return value


# -- what the agent answers ---------------------------------------------------------------------


def timestamp(now: dt.datetime) -> str:
    return now.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text_part(text: str) -> dict[str, Any]:
    return {"text": text, "mediaType": TEXT}


def data_part(data: Any) -> dict[str, Any]:
    return {"data": data, "mediaType": JSON}


def agent_message(message_id: str, parts: list[dict[str, Any]], task_id: str, context_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "contextId": context_id, "taskId": task_id, "role": AGENT, "parts": parts}


def task_json(
    task_id: str,
    context_id: str,
    status: dict[str, Any],
    history: list[dict[str, Any]],
    artifacts: list[dict[str, Any]],
) -> dict[str, Any]:
    task: dict[str, Any] = {"id": task_id, "contextId": context_id, "status": status}
    if artifacts:
        task["artifacts"] = artifacts
    task["history"] = history
    return task


def with_history(task: dict[str, Any], length: int | None) -> dict[str, Any]:
    """The task as answered with at most `length` messages of history (A2A v1.0 §3.2.4)."""
    if length is None:
        return task
    shown = {key: value for key, value in task.items() if key != "history"}
    if length > 0 and task.get("history"):
        shown["history"] = task["history"][-length:]
    return shown


def accepted(modes: tuple[str, ...]) -> tuple[str, ...]:
    """Which of the agent's output modes the client accepts (all when it names none; `*/*` and
    `type/*` count). Raises ContentTypeNotSupported when it accepts none of them."""
    if not modes:
        return OUTPUT_MODES
    wanted = {mode.strip().lower() for mode in modes}
    kept = tuple(mode for mode in OUTPUT_MODES if wanted & {mode, "*/*", "*", mode.split("/")[0] + "/*"})
    if not kept:
        raise ContentTypeNotSupported(f"this agent answers in {' and '.join(OUTPUT_MODES)}, not {sorted(wanted)}")
    return kept
