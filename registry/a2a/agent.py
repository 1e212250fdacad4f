"""The registry's own A2A agent, whatever the binding: `SendMessage` runs a skill and answers the
task it made (complete at once, or stopped in `auth-required`), `GetTask` reads a kept task,
`CancelTask` cancels the one kind of task that can still be going (auth-required) and otherwise
answers TaskNotCancelable (A2A v1.0 §3.1.5)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

from registry.a2a.errors import InvalidParams, TaskNotCancelable, TaskNotFound, UnsupportedOperation
from registry.a2a.messages import (
    CANCELED,
    TERMINAL,
    USER,
    IncomingMessage,
    SendRequest,
    accepted,
    agent_message,
    read_message,
    task_json,
    timestamp,
    with_history,
)
from registry.a2a.register_agent import asked_registration
from registry.a2a.skills import REGISTER_AGENT, Call, Outcome, choose
from registry.a2a.tasks import StoredTask, TaskStore
from registry.auth import Actor
from registry.db.types import utcnow

Skill = Callable[[Call], Outcome]


class RegistryAgent:
    def __init__(
        self,
        skills: dict[str, Skill],
        tasks: TaskStore,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._skills = skills
        self._tasks = tasks
        self._clock = clock
        self._new_id = new_id

    def send_message(self, request: SendRequest, caller: Actor | None) -> dict[str, Any]:
        """Run the skill the message asks for; the task it made. Raises the A2A errors of its
        input (InvalidParams, ContentTypeNotSupported), TaskNotFound and UnsupportedOperation for
        a message to a task that is unknown or over, and the registry's InvalidRequest."""
        modes = accepted(request.accepted_output_modes)
        message = request.message
        if message.task_id is not None:
            return self._continue(request, caller, modes)
        skill = choose(message, request.metadata)
        task_id, context_id = self._new_id(), message.context_id or self._new_id()
        outcome = self._skills[skill](Call(message, caller, modes))
        task = self._task(task_id, context_id, outcome, [_kept(message.raw, task_id, context_id)], skill)
        self._tasks.add(task, caller.principal_id if caller else None)
        return with_history(task, request.history_length)

    def get_task(self, task_id: str, history_length: int | None, caller: Actor | None) -> dict[str, Any]:
        """Raises TaskNotFound."""
        return with_history(self._visible(task_id, caller).task, history_length)

    def cancel_task(self, task_id: str, caller: Actor | None) -> dict[str, Any]:
        """Raises TaskNotFound, TaskNotCancelable."""
        stored = self._visible(task_id, caller)
        if stored.state in TERMINAL:
            raise TaskNotCancelable(f"task {task_id} is {stored.state.removeprefix('TASK_STATE_').lower()}: it is over")
        task = {**stored.task, "status": {"state": CANCELED, "timestamp": timestamp(self._clock())}}
        if not self._tasks.replace(task, stored.principal_id, stored.state):
            return self.cancel_task(task_id, caller)  # changed meanwhile: judge its new state
        return task

    def _continue(self, request: SendRequest, caller: Actor | None, modes: tuple[str, ...]) -> dict[str, Any]:
        """A message to a task that waits for the caller's token (the only kind that waits)."""
        message = request.message
        assert message.task_id is not None
        stored = self._visible(message.task_id, caller)
        task = stored.task
        if stored.state in TERMINAL:
            raise UnsupportedOperation(f"task {task['id']} is over; send a message without taskId to start another")
        if message.context_id not in (None, task["contextId"]):
            raise InvalidParams(f"contextId {message.context_id!r} is not that of task {task['id']}")
        asked = _registration(message, task["history"])
        outcome = self._skills[REGISTER_AGENT](Call(asked, caller, modes))
        history = [*task["history"], _kept(message.raw, task["id"], task["contextId"])]
        updated = self._task(task["id"], task["contextId"], outcome, history, REGISTER_AGENT)
        owner = caller.principal_id if caller else stored.principal_id
        if not self._tasks.replace(updated, owner, stored.state):
            raise UnsupportedOperation(f"task {task['id']} changed meanwhile; read it with GetTask")
        return with_history(updated, request.history_length)

    def _visible(self, task_id: str, caller: Actor | None) -> StoredTask:
        """The task, if it is the caller's to see (A2A v1.0 §13.1: a task of an authenticated
        caller is that caller's; not found otherwise, telling nothing)."""
        stored = self._tasks.get(task_id)
        if stored is None or not _may_see(stored, caller):
            raise TaskNotFound(f"no task {task_id!r} (a task is purged a while after its last change)")
        return stored

    def _task(
        self, task_id: str, context_id: str, outcome: Outcome, history: list[dict[str, Any]], skill: str
    ) -> dict[str, Any]:
        status: dict[str, Any] = {"state": outcome.state, "timestamp": timestamp(self._clock())}
        if outcome.message:
            status["message"] = agent_message(self._new_id(), outcome.message, task_id, context_id)
        task = task_json(task_id, context_id, status, history, outcome.artifacts)
        task["metadata"] = {"skill": skill}
        return task


def _may_see(stored: StoredTask, caller: Actor | None) -> bool:
    if stored.principal_id is None:
        return True  # anonymous: reached by its unguessable id
    return caller is not None and (caller.principal_id == stored.principal_id or caller.is_admin)


def _kept(message: dict[str, Any], task_id: str, context_id: str) -> dict[str, Any]:
    """The user's message as the task's history keeps it: with the task's ids."""
    return {**message, "role": USER, "taskId": task_id, "contextId": context_id}


def _registration(message: IncomingMessage, history: list[dict[str, Any]]) -> IncomingMessage:
    """The message that says what to register: this one if it does ("here is my token" need not),
    else the one that started the task."""
    try:
        asked_registration(message)
        return message
    except InvalidParams:
        return read_message(history[0])
