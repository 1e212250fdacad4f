"""What a push notification body is: its kind and the task it is about.

Two shapes are accepted, the body itself is never changed:

- A2A v1.0 §4.3.3: a `StreamResponse` with exactly one of `task`, `statusUpdate`,
  `artifactUpdate`, `message` (proto3 JSON; the snake_case spellings are accepted too, as
  protobuf's JSON parser does).
- A2A v0.3 §9.5: the `Task` object (`kind: "task"`, `id`), and the v0.3 event objects some
  agents push (`kind: "status-update" | "artifact-update" | "message"`, `taskId`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from registry.relay.errors import InvalidNotification

MAX_TASK_ID = 200

# StreamResponse member -> (kind we record, field of the member that names the task)
_V1_MEMBERS = {
    "task": ("task", "id"),
    "statusUpdate": ("statusUpdate", "taskId"),
    "status_update": ("statusUpdate", "task_id"),
    "artifactUpdate": ("artifactUpdate", "taskId"),
    "artifact_update": ("artifactUpdate", "task_id"),
    "message": ("message", "taskId"),
}
_V03_KINDS = {
    "task": ("task", "id"),
    "status-update": ("statusUpdate", "taskId"),
    "artifact-update": ("artifactUpdate", "taskId"),
    "message": ("message", "taskId"),
}


@dataclasses.dataclass(frozen=True)
class PushBody:
    kind: str
    task_id: str | None
    protocol: str  # "1.0" or "0.3"


def classify(body: object) -> PushBody:
    """The kind and task id of a push notification. Raises InvalidNotification."""
    if not isinstance(body, dict):
        raise InvalidNotification("a push notification body is a JSON object (a StreamResponse or a Task)")
    members = [name for name in body if name in _V1_MEMBERS]
    if members:
        return _stream_response(body, members)
    legacy_kind = body.get("kind", "task")
    if isinstance(legacy_kind, str) and legacy_kind in _V03_KINDS and ("kind" in body or "status" in body):
        kind, field = _V03_KINDS[legacy_kind]
        return PushBody(kind, _task_id(body, field, required=kind != "message"), "0.3")
    raise InvalidNotification(
        "the body is neither an A2A v1.0 StreamResponse (task, statusUpdate, artifactUpdate, message) "
        "nor an A2A v0.3 Task"
    )


def _stream_response(body: dict[str, Any], members: list[str]) -> PushBody:
    if len(members) != 1:
        raise InvalidNotification(f"a StreamResponse holds exactly one of its members, not {sorted(members)}")
    kind, field = _V1_MEMBERS[members[0]]
    inner = body[members[0]]
    if not isinstance(inner, dict):
        raise InvalidNotification(f"{members[0]} must be a JSON object")
    # A Message need not belong to a task (A2A v1.0 §4.1.4); every other member names one.
    return PushBody(kind, _task_id(inner, field, required=kind != "message"), "1.0")


def _task_id(obj: dict[str, Any], field: str, *, required: bool) -> str | None:
    value = obj.get(field)
    if value is None or value == "":
        if required:
            raise InvalidNotification(f"the notification names no task ({field} is missing)")
        return None
    if not isinstance(value, str) or len(value) > MAX_TASK_ID:
        raise InvalidNotification(f"{field} must be a string of at most {MAX_TASK_ID} characters")
    return value
