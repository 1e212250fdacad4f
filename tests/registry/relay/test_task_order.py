"""In-order delivery per task: only a task's earliest pending message is due, and that stays true
when notifications arrive while deliveries end, after replays, and for rows written before it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import event, func, insert, select, text, update

from registry.jobs import JobContext
from registry.relay.ingress import Notification
from registry.relay.job import RelayDeliveryJob
from registry.schema import RelayMessage, RelaySubscription
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
        return {
            row.id: row.due_at is not None
            for row in conn.execute(select(RelayMessage.id, RelayMessage.due_at).where(RelayMessage.state == "pending"))
        }


def test_only_the_head_of_a_task_is_due_and_the_next_becomes_due_when_it_is_delivered(
    client, relay_auth, push_agent, receiver, job, services
):
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


def test_a_replayed_message_goes_before_a_later_one_of_its_task(
    client, relay_auth, push_agent, receiver, job, services, clock
):
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
    client, relay_auth, push_agent, receiver, job, relay, services
):
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


def _head_delivered_and_next_arriving(client, relay_auth, push_agent, receiver, relay):  # type: ignore[no-untyped-def]
    """A task's head delivered but not recorded yet, and a thread ready to push the task's next notification."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    push(client, sub, status_update("a"))
    (due,) = relay.outbox.claim("worker", 10)
    outcome = relay.outbox.perform(due)
    body = json.dumps(status_update("a", "next")).encode()
    arriving = threading.Thread(
        target=relay.ingress.accept, args=(Notification(sub["id"], body, (sub["relayToken"],), None, lambda: ""),)
    )
    return outcome, arriving


def _record_during(services, relay, outcome, arriving, engine_event: str, hook) -> None:  # type: ignore[no-untyped-def]
    """The worker records `outcome` with `hook` on `engine_event` (it starts `arriving` at its moment)."""
    event.listen(services.engine, engine_event, hook)
    try:
        assert relay.outbox.record("worker", [outcome]) == 1
    finally:
        event.remove(services.engine, engine_event, hook)
    arriving.join()


def test_a_notification_arriving_while_the_worker_ends_the_head_is_due_once_it_commits(
    client, relay_auth, push_agent, receiver, relay, services
):
    """The race in-order delivery must survive: the worker has marked a task's head delivered but not
    committed, and the next notification of the task arrives. It must not wait for a head that is gone."""
    outcome, arriving = _head_delivered_and_next_arriving(client, relay_auth, push_agent, receiver, relay)
    recorder = threading.get_ident()

    def before_commit(conn) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == recorder and not arriving.is_alive() and arriving.ident is None:
            arriving.start()
            arriving.join(timeout=2.0)  # it either finishes now (would wait forever) or waits for this commit

    _record_during(services, relay, outcome, arriving, "commit", before_commit)
    assert list(_due(services).values()) == [True]


def _insert_messages(services, sub_id: str, rows: list[tuple[str, int, bool]]) -> None:  # type: ignore[no-untyped-def]
    """(task, seq, due) rows written straight to the table, as concurrent writers could leave them."""
    with services.engine.begin() as conn:
        sub_pk = conn.scalar(select(RelaySubscription.pk).where(RelaySubscription.id == sub_id))
        conn.execute(
            insert(RelayMessage),
            [
                {
                    "id": f"msg_{task}_{seq}",
                    "subscription_pk": sub_pk,
                    "task_key": task,
                    "seq": seq,
                    "kind": "statusUpdate",
                    "body": b"{}",
                    "received_at": START,
                    "state": "pending",
                    "due_at": START if due else None,
                    "attempts": 0,
                    "replays": 0,
                }
                for task, seq, due in rows
            ],
        )


def test_two_due_messages_of_one_task_are_claimed_one_at_a_time(
    client, relay_auth, push_agent, receiver, relay, services
):
    """Two notifications of a task accepted at the same moment by two web processes may both be due."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    _insert_messages(services, sub["id"], [("a", 1, True), ("a", 2, True), ("b", 1, True)])
    assert sorted(d.message_id for d in relay.outbox.claim("worker", 10)) == ["msg_a_1", "msg_b_1"]


def test_the_prune_job_makes_a_stranded_waiting_message_due(client, relay_auth, push_agent, receiver, relay, services):
    """A head ended by a worker of an older version leaves the next message waiting; pruning repairs it."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    _insert_messages(services, sub["id"], [("a", 2, False), ("a", 3, False)])
    relay.operations.prune()
    assert _due(services) == {"msg_a_2": True, "msg_a_3": False}


def test_the_prune_job_passes_over_a_stranded_message_a_worker_holds(
    client, relay_auth, push_agent, receiver, relay, services
):
    """The repair never waits for a row another transaction holds (a worker promoting it itself):
    waiting rows in two orders would deadlock. It takes the message at the next prune."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("row locks: SQLite has one writer at a time")
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    _insert_messages(services, sub["id"], [("a", 2, False), ("b", 3, False)])
    with services.engine.connect() as holder:
        holder.execute(select(RelayMessage.pk).where(RelayMessage.id == "msg_a_2").with_for_update())
        pruning = threading.Thread(target=relay.operations.prune)
        pruning.start()
        pruning.join(timeout=10)
        finished = not pruning.is_alive()
        holder.rollback()
    pruning.join()
    assert finished, "the prune job waited for a row a worker holds"
    assert _due(services) == {"msg_a_2": False, "msg_b_3": True}
    relay.operations.prune()
    assert _due(services) == {"msg_a_2": True, "msg_b_3": True}


def test_message_numbers_go_past_32_bits(client, relay_auth, push_agent, receiver, services):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    high = 2**40
    if services.engine.dialect.name == "postgresql":
        with services.engine.begin() as conn:
            conn.execute(text("SELECT setval('relay_message_order', :n)"), {"n": high})
    else:
        _insert_messages(services, sub["id"], [("a", high, False)])
        with services.engine.begin() as conn:
            conn.execute(update(RelayMessage).values(state="delivered"))
    assert push(client, sub, status_update("a")).status_code == 202
    with services.engine.connect() as conn:
        assert conn.scalar(select(func.max(RelayMessage.seq))) > high


def test_bulk_replay_of_many_tasks_keeps_each_task_in_order(
    client, relay_auth, push_agent, receiver, job, services, clock, monkeypatch
):
    monkeypatch.setattr("registry.relay.operations.REPLAY_TASKS_PER_TRANSACTION", 2)  # several transactions
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    receiver.default = (500, {}, b"down")
    since = clock().isoformat()
    sent = {task: [push(client, sub, status_update(task, str(n))).json["id"] for n in range(2)] for task in "abcde"}
    for advance in (0, 5, 300, 0, 5, 300):
        clock.advance(advance)
        run_job(job)
    assert _due(services) == {}
    receiver.default = (204, {}, b"")
    receiver.received.clear()
    response = client.post(f"/v1/relay/subscriptions/{sub['id']}/replay", json={"since": since}, headers=relay_auth)
    assert response.json["replayed"] == 10
    assert sorted(due for due in _due(services).values()) == [False] * 5 + [True] * 5
    for _ in range(3):
        run_job(job)
    got = [r.webhook_id for r in receiver.received]
    for first, second in sent.values():
        assert got.index(first) < got.index(second)


def test_a_notification_arriving_between_the_workers_write_and_its_promotion_is_due(
    client, relay_auth, push_agent, receiver, relay, services
):
    """The window the worker's late task lock leaves: the notification commits before the lock."""
    outcome, arriving = _head_delivered_and_next_arriving(client, relay_auth, push_agent, receiver, relay)
    recorder, fired = threading.get_ident(), []

    def before(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if (
            threading.get_ident() == recorder
            and not fired
            and (
                "pg_advisory_xact_lock(" in statement
                or statement.lstrip().startswith("UPDATE relay_messages SET due_at")
            )
        ):
            fired.append(statement)
            arriving.start()
            arriving.join(timeout=2.0)

    _record_during(services, relay, outcome, arriving, "before_cursor_execute", before)
    assert fired and list(_due(services).values()) == [True]


def test_a_worker_ending_the_head_while_a_notification_of_its_task_commits_makes_that_notification_due(
    client, relay_auth, push_agent, receiver, relay, services
):
    """The other order of the race: the notification has found the head pending and is about to commit
    when the worker comes to end the head. The worker must wait for it, and then promote it."""
    outcome, arriving = _head_delivered_and_next_arriving(client, relay_auth, push_agent, receiver, relay)
    committing, release = threading.Event(), threading.Event()

    def before_commit(conn) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == arriving.ident:
            committing.set()
            release.wait(timeout=5.0)

    event.listen(services.engine, "commit", before_commit)
    try:
        arriving.start()
        assert committing.wait(timeout=5.0)
        recording = threading.Thread(target=relay.outbox.record, args=("worker", [outcome]))
        recording.start()
        recording.join(timeout=0.5)
        assert recording.is_alive()  # it waits for the notification's transaction
        release.set()
        arriving.join()
        recording.join()
    finally:
        release.set()
        event.remove(services.engine, "commit", before_commit)
    assert list(_due(services).values()) == [True]


def _parked_behind_a_replay(client, relay_auth, push_agent, receiver, job):  # type: ignore[no-untyped-def]
    """A task's first message delivered, its second failed with `Retry-After: 600`, then the first
    replayed, so the second waits behind it again: (subscription, first id, second id)."""
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    first = push(client, sub, status_update("a")).json["id"]
    run_job(job)
    receiver.default = (503, {"Retry-After": "600"}, b"busy")
    second = push(client, sub, status_update("a")).json["id"]
    run_job(job)
    receiver.default = (204, {}, b"")
    assert client.post(f"/v1/relay/messages/{first}/replay", headers=relay_auth).status_code == 200
    return sub, first, second


def test_a_message_made_to_wait_by_a_replay_keeps_its_retry_back_off(
    client, relay_auth, push_agent, receiver, job, services, clock
):
    """A failed message waits again behind a replayed earlier one; once that is delivered, the failed one
    is due when its back-off (here the target's `Retry-After`) says, not at once."""
    sub, first, second = _parked_behind_a_replay(client, relay_auth, push_agent, receiver, job)
    assert _due(services) == {first: True, second: False}
    listed = {
        m["id"]: m
        for m in client.get(f"/v1/relay/subscriptions/{sub['id']}/messages", headers=relay_auth).json["items"]
    }
    assert (listed[second]["waitingForEarlier"], listed[second]["nextAttemptAt"]) == (True, None)
    assert dt.datetime.fromisoformat(listed[second]["notBefore"].replace("Z", "+00:00")) == START + dt.timedelta(
        seconds=600
    )
    assert (listed[first]["waitingForEarlier"], listed[first]["notBefore"]) == (False, None)
    run_job(job)
    assert [r.webhook_id for r in receiver.received] == [first, second, first]
    with services.engine.connect() as conn:
        due_at = conn.scalar(select(RelayMessage.due_at).where(RelayMessage.id == second))
    assert due_at == START + dt.timedelta(seconds=600)
    clock.advance(600)
    run_job(job)
    assert [r.webhook_id for r in receiver.received] == [first, second, first, second]


def test_a_message_whose_back_off_ended_while_it_waited_is_due_when_promoted(
    client, relay_auth, push_agent, receiver, job, services, clock
):
    _, first, second = _parked_behind_a_replay(client, relay_auth, push_agent, receiver, job)
    clock.advance(900)
    run_job(job)
    assert [r.webhook_id for r in receiver.received] == [first, second, first, second]
    assert _due(services) == {}
