"""In-order delivery per task: only a task's earliest pending message is due, and that stays true
when notifications arrive while deliveries end, after replays, and for rows written before it."""

from __future__ import annotations

import dataclasses
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import create_engine, event, insert, select

from registry.jobs import JobContext
from registry.migrate import upgrade
from registry.models import Principal, RelayMessage, RelaySubscription
from registry.relay.ingress import Notification
from registry.relay.job import RelayDeliveryJob
from tests.registry.relay.conftest import push, status_update, subscribe
from tests.support.jobs import START, run_job


@pytest.fixture
def relay_settings(relay_settings):  # type: ignore[no-untyped-def]
    return dataclasses.replace(relay_settings, rate=1_000_000.0, burst=1_000_000)


@pytest.fixture
def job(relay):  # type: ignore[no-untyped-def]
    return RelayDeliveryJob(1.0, relay.outbox, relay.wakeup, batch=8, dispatcher=False)


def _due(services) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return {row.id: row.due_at is not None
                for row in conn.execute(select(RelayMessage.id, RelayMessage.due_at).where(RelayMessage.state == "pending"))}


def test_only_the_head_of_a_task_is_due_and_the_next_becomes_due_when_it_is_delivered(
        client, relay_auth, push_agent, receiver, job, services):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    first, second, third = (push(client, sub, status_update("a", str(n))).json["id"] for n in range(3))
    other = push(client, sub, status_update("b")).json["id"]
    assert _due(services) == {first: True, second: False, third: False, other: True}
    receiver.default = (500, {}, b"not yet")  # the head stays pending: the others keep waiting
    run_job(job)
    assert _due(services) == {first: True, second: False, third: False, other: True}
    receiver.default = (204, {}, b"")
    services.relay.outbox._clock.advance(5)  # the retry is due
    run_job(job)
    assert _due(services) == {}
    assert [r.webhook_id for r in receiver.received if r.webhook_id != other][-3:] == [first, second, third]


def test_a_replayed_message_goes_before_a_later_one_of_its_task(client, relay_auth, push_agent, receiver, job, services, clock):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    first = push(client, sub, status_update("a")).json["id"]
    run_job(job)
    receiver.default = (500, {}, b"not yet")
    second = push(client, sub, status_update("a")).json["id"]
    run_job(job)
    clock.advance(5)  # the second message's retry is due now
    receiver.default = (204, {}, b"")
    assert client.post(f"/v1/relay/messages/{first}/replay", headers=relay_auth).status_code == 200
    assert _due(services) == {first: True, second: False}
    run_job(job)
    assert [r.webhook_id for r in receiver.received] == [first, second, first, second]
    assert _due(services) == {}


def test_notifications_arriving_while_deliveries_end_are_all_delivered_in_order(
        client, relay_auth, push_agent, receiver, job, relay, services):
    """Pushers and a delivering worker race; no message may be left waiting for nothing."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    tasks, per_pusher, pushers = 4, 50, 4
    stop = threading.Event()

    def pusher(n: int) -> list[tuple[str, str]]:
        sent = []
        for k in range(per_pusher):
            task = f"task-{(n + k) % tasks}"
            body = json.dumps(status_update(task, f"{n}-{k}")).encode()
            accepted = relay.ingress.accept(Notification(sub["id"], body, (sub["relayToken"],), None, lambda: ""))
            sent.append((task, accepted.message_id))
        return sent

    def deliver() -> None:
        with ThreadPoolExecutor(4) as pool:
            ctx = JobContext(owner="racing-worker", executor=pool)
            while not stop.wait(0.002):
                job.drain(ctx)

    worker = threading.Thread(target=deliver)
    worker.start()
    try:
        with ThreadPoolExecutor(pushers) as pool:
            sent = [item for part in pool.map(pusher, range(pushers)) for item in part]
    finally:
        stop.set()
        worker.join()
    run_job(job)

    with services.engine.connect() as conn:
        rows = list(conn.execute(select(RelayMessage.id, RelayMessage.task_key, RelayMessage.seq, RelayMessage.state)))
    assert len(rows) == pushers * per_pusher
    assert [row.id for row in rows if row.state != "delivered"] == []
    first_arrival = {}
    for position, got in enumerate(receiver.received):
        first_arrival.setdefault(got.webhook_id, position)
    for task in {task for task, _ in sent}:
        in_seq_order = [row.id for row in sorted(rows, key=lambda r: r.seq) if row.task_key == task]
        assert sorted(in_seq_order, key=first_arrival.__getitem__) == in_seq_order


def test_a_notification_arriving_while_the_worker_ends_the_head_is_due_once_it_commits(
        client, relay_auth, push_agent, receiver, relay, services):
    """The race in-order delivery must survive: the worker has marked a task's head delivered but not
    committed, and the next notification of the task arrives. It must not wait for a head that is gone."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    push(client, sub, status_update("a"))
    (due,) = relay.outbox.claim("worker", 10)
    outcome = relay.outbox.perform(due)
    body = json.dumps(status_update("a", "next")).encode()
    arriving = threading.Thread(target=relay.ingress.accept,
                                args=(Notification(sub["id"], body, (sub["relayToken"],), None, lambda: ""),))
    recorder = threading.get_ident()

    def before_commit(conn) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == recorder and not arriving.is_alive() and arriving.ident is None:
            arriving.start()
            arriving.join(timeout=2.0)  # it either finishes now (would wait forever) or waits for this commit

    event.listen(services.engine, "commit", before_commit)
    try:
        assert relay.outbox.record("worker", [outcome]) == 1
    finally:
        event.remove(services.engine, "commit", before_commit)
    arriving.join()
    assert list(_due(services).values()) == [True]


def test_the_migration_leaves_only_the_head_of_each_task_due(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0004_relay")
    with engine.begin() as conn:
        conn.execute(insert(Principal).values(id=1, name="client", created_at=START))
        conn.execute(insert(RelaySubscription).values(
            pk=1, id="sub_1", owner_id=1, agent_id="agt_1", target_url="https://client.example.com/hook",
            auth_mode="token", status="active", created_at=START, updated_at=START))
        conn.execute(insert(RelayMessage), [
            {"id": f"msg_{task}{seq}", "subscription_pk": 1, "task_key": task, "seq": seq, "kind": "statusUpdate",
             "body": b"{}", "received_at": START, "state": state, "due_at": START if state == "pending" else None,
             "attempts": 0, "replays": 0}
            for task, seq, state in (("a", 1, "delivered"), ("a", 2, "pending"), ("a", 3, "pending"),
                                     ("b", 1, "pending"), ("b", 2, "pending"), ("b", 3, "pending"))
        ])
    upgrade(engine)
    with engine.connect() as conn:
        rows = conn.execute(select(RelayMessage.id, RelayMessage.due_at).where(RelayMessage.state == "pending"))
        due = {row.id: row.due_at for row in rows}
    assert {key for key, value in due.items() if value is not None} == {"msg_a2", "msg_b1"}
