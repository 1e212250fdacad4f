"""Delivery from the outbox to a real webhook receiver: headers, signatures, retries, ordering,
dead letters, 410 and the attempt log. The job runs as the worker runs it, on a fake clock."""

from __future__ import annotations

import json
import threading

import pytest
from sqlalchemy import event, select, text

from registry.relay.job import RelayDeliveryJob
from registry.schema import RelayAttempt, RelayMessage, RelaySubscription
from tests.registry.relay.conftest import push, status_update, subscribe
from tests.support.jobs import run_job
from tests.support.webhooks import verify_webhook


@pytest.fixture
def job(relay):
    return RelayDeliveryJob(1.0, relay.outbox, relay.wakeup, batch=8, dispatcher=False)


@pytest.fixture
def sub(client, relay_auth, push_agent, receiver):
    return subscribe(
        client,
        relay_auth,
        push_agent,
        receiver.url,
        targetToken="client-token",
        targetAuthorization="Bearer client-credential",
    )


def _messages(services):
    with services.sessions() as session:
        return {m.id: m for m in session.scalars(select(RelayMessage).order_by(RelayMessage.pk))}


def _attempts(services, message_id):
    with services.sessions() as session:
        pk = session.scalar(select(RelayMessage.pk).where(RelayMessage.id == message_id))
        return list(
            session.scalars(select(RelayAttempt).where(RelayAttempt.message_pk == pk).order_by(RelayAttempt.id))
        )


def test_delivers_the_body_unchanged_with_client_credentials_and_a_valid_signature(
    client, sub, job, receiver, relay, clock
):
    body = status_update("task-1", "TASK_STATE_COMPLETED")
    accepted = push(client, sub, body).json
    report = run_job(job)
    assert report.recorded == 1
    (got,) = receiver.received
    assert json.loads(got.body) == body
    assert got.headers["x-a2a-notification-token"] == "client-token"
    assert got.headers["authorization"] == "Bearer client-credential"
    assert got.headers["content-type"] == "application/json"
    assert got.headers["webhook-id"] == accepted["id"]
    assert int(got.headers["webhook-timestamp"]) == int(clock().timestamp())
    assert got.headers["webhook-signature"].startswith("v1a,")
    assert verify_webhook(got, client.get("/.well-known/jwks.json").json)
    assert run_job(job).claimed == 0  # a second run finds nothing due


def test_a_tampered_body_does_not_verify(client, sub, job, receiver):
    push(client, sub, status_update("task-1"))
    run_job(job)
    (got,) = receiver.received
    forged = type(got)(got.path, got.headers, got.body.replace(b"task-1", b"task-2"))
    assert not verify_webhook(forged, client.get("/.well-known/jwks.json").json)


def test_fails_twice_then_succeeds_one_delivery_three_attempts_one_id(client, sub, job, receiver, services, clock):
    receiver.fail_next(2, status=503)
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    assert _messages(services)[message_id].state == "pending"
    assert run_job(job).claimed == 0  # not due before the back-off passes
    clock.advance(5)
    run_job(job)
    clock.advance(299)
    assert run_job(job).claimed == 0
    clock.advance(1)
    run_job(job)
    message = _messages(services)[message_id]
    assert (message.state, message.attempts, message.last_status) == ("delivered", 3, 200)
    assert [a.outcome for a in _attempts(services, message_id)] == ["http_error", "http_error", "delivered"]
    assert [a.http_status for a in _attempts(services, message_id)] == [503, 503, 200]
    assert {r.webhook_id for r in receiver.received} == {message_id}  # the same id on every attempt
    assert len({r.headers["webhook-timestamp"] for r in receiver.received}) == 3


def test_dead_lettered_after_the_last_attempt(client, sub, job, receiver, services, clock):
    receiver.fail_next(3, status=500)
    message_id = push(client, sub, status_update("task-1")).json["id"]
    for advance in (0, 5, 300):
        clock.advance(advance)
        run_job(job)
    message = _messages(services)[message_id]
    assert (message.state, message.attempts, message.due_at) == ("dead", 3, None)
    assert _attempts(services, message_id)[-1].next_attempt_at is None
    clock.advance(100_000)
    assert run_job(job).claimed == 0


def test_retry_after_is_honoured(client, sub, job, receiver, services, clock):
    receiver.fail_next(1, status=429, headers={"Retry-After": "42"})
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    message = _messages(services)[message_id]
    assert (message.due_at - clock()).total_seconds() == 42
    clock.advance(41)
    assert run_job(job).claimed == 0
    clock.advance(1)
    assert run_job(job).recorded == 1


def test_retry_after_is_bounded(client, sub, job, receiver, services, clock):
    receiver.fail_next(1, status=503, headers={"Retry-After": "999999"})
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    assert (_messages(services)[message_id].due_at - clock()).total_seconds() == 3600


def test_410_disables_the_subscription_and_dead_letters(client, relay_auth, sub, job, receiver, services):
    receiver.fail_next(1, status=410)
    first = push(client, sub, status_update("task-1")).json["id"]
    second = push(client, sub, status_update("task-2")).json["id"]
    run_job(job)
    shown = client.get(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth).json
    assert shown["status"] == "disabled" and "410" in shown["statusReason"]
    messages = _messages(services)
    states = {messages[first].state, messages[second].state}
    assert "dead" in states
    client.patch(f"/v1/relay/subscriptions/{sub['id']}", json={"status": "active"}, headers=relay_auth)
    run_job(job)
    assert "pending" not in {m.state for m in _messages(services).values()}


def test_redirects_are_not_followed(client, sub, job, receiver, services):
    receiver.fail_next(1, status=307, headers={"Location": receiver.url + "/elsewhere"})
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    (attempt,) = _attempts(services, message_id)
    assert (attempt.outcome, attempt.http_status) == ("redirect", 307)
    assert [r.path for r in receiver.received] == ["/hook"]


def test_a_timeout_is_a_failure_to_retry(client, sub, job, receiver, services):
    receiver.script.append("hang")  # relay_settings: 1 s timeout
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    (attempt,) = _attempts(services, message_id)
    assert attempt.outcome == "timeout"
    assert _messages(services)[message_id].state == "pending"


def test_a_later_message_of_a_task_waits_for_the_earlier(client, relay_auth, push_agent, receiver, job, clock):
    sub = subscribe(client, relay_auth, push_agent, receiver.url)
    first = push(client, sub, status_update("a", "TASK_STATE_WORKING")).json["id"]
    second = push(client, sub, status_update("a", "TASK_STATE_COMPLETED")).json["id"]
    other = push(client, sub, status_update("b")).json["id"]
    failed: list[str] = []

    def fail_first_once(got):  # type: ignore[no-untyped-def]
        if got.webhook_id == first and not failed:
            failed.append(first)
            return (500, {}, b"later")
        return None

    receiver.rule = fail_first_once
    run_job(job)
    assert sorted(r.webhook_id for r in receiver.received) == sorted([first, other])  # task b is not held up
    clock.advance(5)
    run_job(job)
    assert [r.webhook_id for r in receiver.received][2:] == [first, second]


def test_the_attempt_log_and_message_list(client, relay_auth, sub, job, receiver):
    receiver.fail_next(1, status=500)
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    listed = client.get(f"/v1/relay/subscriptions/{sub['id']}/messages", headers=relay_auth).json
    (item,) = listed["items"]
    assert (item["id"], item["state"], item["attempts"], item["lastStatus"]) == (message_id, "pending", 1, 500)
    detail = client.get(f"/v1/relay/messages/{message_id}", headers=relay_auth).json
    assert detail["body"] == status_update("task-1")
    (attempt,) = detail["attemptLog"]
    assert (attempt["outcome"], attempt["httpStatus"], attempt["response"]) == ("http_error", 500, "not now")
    assert attempt["latencyMs"] is not None and attempt["nextAttemptAt"] == item["nextAttemptAt"]
    pending = client.get(f"/v1/relay/subscriptions/{sub['id']}/messages?state=delivered", headers=relay_auth).json
    assert pending["items"] == []


def test_replay_delivers_again_with_the_same_id(client, relay_auth, sub, job, receiver, services):
    message_id = push(client, sub, status_update("task-1")).json["id"]
    run_job(job)
    replayed = client.post(f"/v1/relay/messages/{message_id}/replay", headers=relay_auth)
    assert replayed.status_code == 200 and replayed.json["state"] == "pending" and replayed.json["replays"] == 1
    assert client.post(f"/v1/relay/messages/{message_id}/replay", headers=relay_auth).status_code == 409
    run_job(job)
    assert [r.webhook_id for r in receiver.received] == [message_id, message_id]
    assert _messages(services)[message_id].state == "delivered"


def test_bulk_replay_of_dead_letters_since_a_time(client, relay_auth, sub, job, receiver, services, clock):
    receiver.default = (500, {}, b"down")
    early = push(client, sub, status_update("task-1")).json["id"]
    for advance in (0, 5, 300):
        clock.advance(advance)
        run_job(job)
    since = clock.advance(1).isoformat()
    clock.advance(60)
    late = push(client, sub, status_update("task-1")).json["id"]
    for advance in (0, 5, 300):
        clock.advance(advance)
        run_job(job)
    assert {_messages(services)[i].state for i in (early, late)} == {"dead"}
    receiver.default = (200, {}, b"ok")
    response = client.post(f"/v1/relay/subscriptions/{sub['id']}/replay", json={"since": since}, headers=relay_auth)
    assert response.json["replayed"] == 1
    run_job(job)
    assert (_messages(services)[early].state, _messages(services)[late].state) == ("dead", "delivered")


def test_deleting_dead_letters_what_is_undelivered(client, relay_auth, sub, services):
    message_id = push(client, sub, status_update("task-1")).json["id"]
    client.delete(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth)
    assert _messages(services)[message_id].state == "dead"
    with services.sessions() as session:
        row = session.scalar(select(RelaySubscription))
    assert (row.status, row.token_hash, row.target_secrets) == ("deleted", None, None)


def test_prune_removes_finished_messages_past_retention(client, sub, job, relay, services, clock):
    push(client, sub, status_update("task-1"))
    run_job(job)
    clock.advance(services.settings.relay.retention + 1)
    kept = push(client, sub, status_update("task-1")).json["id"]
    assert relay.operations.prune() == 1
    assert list(_messages(services)) == [kept]


def _until_done_or_waiting_for_a_lock(thread: threading.Thread, engine) -> None:  # type: ignore[no-untyped-def]
    """Return once `thread` has finished or its transaction waits for a lock another one holds."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    with engine.connect() as conn:
        while thread.is_alive() and not conn.scalar(waiting):
            thread.join(timeout=0.01)


def test_deleting_a_subscription_while_a_worker_records_its_410(
    client, app, relay_auth, sub, job, receiver, relay, services
):
    """The worker holds its messages (the one it ended, the next of the task it made due) and is about to
    disable the subscription, because the target answered 410, when its owner deletes it. Neither may wait
    for the other: PostgreSQL would abort one of them (the DELETE answering 500)."""
    if services.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: there is nothing to interleave")
    push(client, sub, status_update("task-1"))
    waiting = push(client, sub, status_update("task-1", "next")).json["id"]
    receiver.default = (410, {}, b"gone")
    (due,) = relay.outbox.claim("worker", 10)
    outcome = relay.outbox.perform(due)
    answers: list[int] = []
    deleting = threading.Thread(
        target=lambda: answers.append(
            app.test_client().delete(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth).status_code
        )
    )
    recorder = threading.get_ident()

    def before(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == recorder and statement.lstrip().startswith("UPDATE relay_subscriptions"):
            deleting.start()
            _until_done_or_waiting_for_a_lock(deleting, services.engine)

    event.listen(services.engine, "before_cursor_execute", before)
    try:
        assert relay.outbox.record("worker", [outcome]) == 1
    finally:
        event.remove(services.engine, "before_cursor_execute", before)
    deleting.join()
    assert answers == [204]
    with services.sessions() as session:
        assert session.scalar(select(RelaySubscription.status)) == "deleted"
    assert _messages(services)[due.message_id].state == "dead"
    relay.operations.prune()  # the message the worker made due when its subscription was going
    assert _messages(services)[waiting].state == "dead"
