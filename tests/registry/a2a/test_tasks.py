"""Tasks are kept in the database for GetTask: any web process reads them, for an hour after their
last change; a task made by an authenticated caller is that caller's alone (A2A v1.0 §13.1)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from registry.a2a import TaskStore
from registry.app import create_app
from registry.container import build_services
from registry.settings import Settings
from tests.support.a2a_calls import rpc, send


def test_a_task_made_by_one_web_process_is_read_by_another(client: Any, settings: Settings) -> None:
    task = send(client, "weather")
    other = build_services(settings)  # a second process: its own engine, pools and app
    try:
        read = rpc(create_app(services=other).test_client(), "GetTask", {"id": task["id"]})["result"]
    finally:
        other.close()
    assert read == task


def test_history_length_trims_the_history(client: Any) -> None:
    task = send(client, "weather")
    assert len(task["history"]) == 1 and task["history"][0]["taskId"] == task["id"]
    assert "history" not in rpc(client, "GetTask", {"id": task["id"], "historyLength": 0})["result"]
    assert rpc(client, "GetTask", {"id": task["id"], "historyLength": 5})["result"]["history"] == task["history"]
    sent = rpc(
        client, "SendMessage", {"message": task["history"][0] | {"taskId": None}, "configuration": {"historyLength": 0}}
    )
    assert "history" not in sent["result"]["task"]


def test_a_task_reads_back_in_the_generation_that_asks(client: Any) -> None:
    task = send(client, "weather")
    old = rpc(client, "tasks/get", {"id": task["id"]}, version=None)["result"]
    assert (old["kind"], old["status"]["state"], old["history"][0]["role"]) == ("task", "completed", "user")
    assert old["artifacts"][0]["parts"][0]["kind"] == "data"


def test_an_authenticated_callers_task_is_not_found_by_anyone_else(
    client: Any, writer_token: str, other_token: str, admin_token: str
) -> None:
    task = send(client, "weather", headers={"Authorization": f"Bearer {writer_token}"})

    def read(token: str | None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        return rpc(client, "GetTask", {"id": task["id"]}, headers=headers)

    assert read(writer_token)["result"]["id"] == task["id"]
    assert read(admin_token)["result"]["id"] == task["id"]
    assert read(other_token)["error"]["code"] == -32001  # not found: nothing says it exists
    assert read(None)["error"]["code"] == -32001
    anonymous = send(client, "weather")
    assert read_anonymous(client, anonymous["id"]) == anonymous["id"]


def read_anonymous(client: Any, task_id: str) -> str:
    return str(rpc(client, "GetTask", {"id": task_id})["result"]["id"])


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


def test_tasks_expire_after_the_retention_and_are_pruned(services: Any) -> None:
    clock = Clock()
    store = TaskStore(services.engine, retention=60, clock=clock)
    task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}, "history": []}
    store.add(task, None)
    clock.now += dt.timedelta(seconds=59)
    assert store.get("t-1") is not None and store.get("t-1").task == task  # type: ignore[union-attr]
    clock.now += dt.timedelta(seconds=2)
    assert store.get("t-1") is None
    assert store.prune() == 1 and store.prune() == 0


def test_a_change_keeps_a_task_longer_and_only_from_the_state_it_was_in(services: Any) -> None:
    clock = Clock()
    store = TaskStore(services.engine, retention=60, clock=clock)
    task = {"id": "t-2", "contextId": "c", "status": {"state": "TASK_STATE_AUTH_REQUIRED"}, "history": []}
    store.add(task, None)
    clock.now += dt.timedelta(seconds=50)
    done = {**task, "status": {"state": "TASK_STATE_COMPLETED"}}
    assert store.replace(done, None, "TASK_STATE_AUTH_REQUIRED")
    assert not store.replace(done, None, "TASK_STATE_AUTH_REQUIRED")  # it is no longer in that state
    clock.now += dt.timedelta(seconds=50)
    assert store.get("t-2") is not None and store.get("t-2").state == "TASK_STATE_COMPLETED"  # type: ignore[union-attr]
