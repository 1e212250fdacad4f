"""What a push notification body is: its kind and the task it is about (the body is never changed).

Accepted: an A2A v1.0 §4.3.3 `StreamResponse` with exactly one of `task`, `statusUpdate`,
`artifactUpdate`, `message` (snake_case too, as protobuf's JSON parser reads them), or an A2A v0.3
§9.5 `Task` (`kind: "task"`, `id`) or v0.3 event (`kind: "status-update"`, … with `taskId`).
"""

from __future__ import annotations

import dataclasses

from registry.relay.errors import InvalidNotification
from registry.relay.models import MAX_TASK_ID

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


def classify(body: object) -> PushBody:
    """The kind and task id of a push notification. Raises InvalidNotification."""
    if not isinstance(body, dict):
        raise InvalidNotification("a push notification body is a JSON object (a StreamResponse or a Task)")
    members, legacy = [name for name in body if name in _V1_MEMBERS], body.get("kind", "task")
    if len(members) > 1:
        raise InvalidNotification(f"a StreamResponse holds exactly one of its members, not {sorted(members)}")
    if members:
        (kind, field), event = _V1_MEMBERS[members[0]], body[members[0]]
        if not isinstance(event, dict):
            raise InvalidNotification(f"{members[0]} must be a JSON object")
    elif isinstance(legacy, str) and legacy in _V03_KINDS and ("kind" in body or "status" in body):
        (kind, field), event = _V03_KINDS[legacy], body
    else:
        raise InvalidNotification(
            "the body is neither an A2A v1.0 StreamResponse (task, statusUpdate, artifactUpdate, message) "
            "nor an A2A v0.3 Task"
        )
    task_id = event.get(field)
    if task_id is None or task_id == "":
        if kind != "message":  # a Message need not belong to a task (A2A v1.0 §4.1.4)
            raise InvalidNotification(f"the notification names no task ({field} is missing)")
        return PushBody(kind, None)
    if not isinstance(task_id, str) or len(task_id) > MAX_TASK_ID:
        raise InvalidNotification(f"{field} must be a string of at most {MAX_TASK_ID} characters")
    return PushBody(kind, task_id)
