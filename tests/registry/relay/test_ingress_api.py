"""The relay ingress `POST /relay/{id}`: accepted bodies and every refusal."""

from __future__ import annotations

import io
import json

import pytest
from sqlalchemy import select, text

from registry.app import create_app
from registry.container import build_services
from registry.schema import RelayMessage
from tests.registry.relay.conftest import push, status_update, subscribe

pytestmark = pytest.mark.usefixtures("relay")

V03_TASK = {"id": "task-1", "contextId": "ctx", "status": {"state": "completed"}, "kind": "task"}
V1_BODIES = [
    {"task": {"id": "task-1", "contextId": "ctx", "status": {"state": "TASK_STATE_SUBMITTED"}}},
    status_update("task-1"),
    {"artifactUpdate": {"taskId": "task-1", "contextId": "ctx", "artifact": {"artifactId": "a", "parts": []}}},
    {"message": {"messageId": "m1", "taskId": "task-1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}},
]


@pytest.fixture
def sub(client, relay_auth, push_agent, receiver):
    return subscribe(client, relay_auth, push_agent, receiver.url, taskId="task-1")


def _stored(services):
    with services.sessions() as session:
        return list(session.scalars(select(RelayMessage).order_by(RelayMessage.pk)))


@pytest.mark.parametrize(
    "body", [V03_TASK, *V1_BODIES], ids=["v0.3-task", "task", "statusUpdate", "artifactUpdate", "message"]
)
def test_accepts_v03_tasks_and_v1_stream_responses(client, sub, services, body):
    response = push(client, sub, body)
    assert response.status_code == 202, response.json
    assert response.json["status"] == "accepted" and response.json["taskId"] == "task-1"
    (message,) = _stored(services)
    assert message.id == response.json["id"]
    assert json.loads(message.body) == body  # stored verbatim
    assert (message.state, message.task_key, message.attempts) == ("pending", "task-1", 0)


def test_a_new_messages_due_time_is_stored_as_every_other_time(client, sub, services):
    """With no first delay a message is due when it was received; both are stored alike (on SQLite the
    due time once kept its UTC offset in the text, unlike every other time the relay writes)."""
    assert push(client, sub, status_update("task-1")).status_code == 202
    with services.engine.connect() as conn:
        received, due = conn.execute(text("SELECT received_at, due_at FROM relay_messages")).one()
    assert due == received


@pytest.mark.parametrize("header", ["X-A2A-Notification-Token", "A2A-Notification-Token", "Authorization"])
def test_the_secret_is_accepted_in_each_header(client, sub, header):
    assert push(client, sub, status_update("task-1"), header=header).status_code == 202


def test_messages_of_a_task_are_numbered_in_arrival_order(client, relay_auth, push_agent, receiver, services):
    any_task = subscribe(client, relay_auth, push_agent, receiver.url)
    sent = ["a", "b", "a", "a", "b"]
    for task in sent:
        assert push(client, any_task, status_update(task)).status_code == 202
    stored = _stored(services)  # in the order they were accepted
    assert [m.task_key for m in stored] == sent
    for task in ("a", "b"):
        numbers = [m.seq for m in stored if m.task_key == task]
        assert len(set(numbers)) == sent.count(task) and numbers == sorted(numbers)  # distinct, increasing


def test_a_message_without_a_task_is_accepted_when_no_task_is_bound(client, relay_auth, push_agent, receiver, services):
    any_task = subscribe(client, relay_auth, push_agent, receiver.url)
    assert push(client, any_task, {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}).status_code == 202
    assert _stored(services)[0].task_key == ""


def test_401_for_a_wrong_or_missing_secret(client, sub, services):
    assert push(client, sub, status_update("task-1"), token="adxr_wrong").status_code == 401
    response = client.post(f"/relay/{sub['id']}", json=status_update("task-1"))
    assert response.status_code == 401
    assert _stored(services) == []


def test_404_for_an_unknown_subscription(client, sub):
    response = client.post(
        "/relay/sub_unknown", json=status_update("task-1"), headers={"X-A2A-Notification-Token": sub["relayToken"]}
    )
    assert response.status_code == 404


def test_409_when_the_task_does_not_match(client, sub, services):
    response = push(client, sub, status_update("task-2"))
    assert response.status_code == 409
    assert response.json["error"]["code"] == "task_mismatch"
    assert push(client, sub, {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}).status_code == 409
    assert _stored(services) == []


def test_413_over_the_size_limit(client, sub, relay, services):
    limit = services.settings.relay.max_body_bytes
    body = status_update("task-1")
    body["statusUpdate"]["metadata"] = {"pad": "x" * limit}
    response = push(client, sub, body)
    assert response.status_code == 413
    assert response.json["error"]["code"] == "payload_too_large"


def test_413_for_a_chunked_body_that_grows_over_the_limit(client, sub, services):
    """No Content-Length to refuse up front: the limit holds while the body is read (a body cut at
    the limit is never taken for the whole notification)."""
    limit = services.settings.relay.max_body_bytes
    body = json.dumps({**status_update("task-1"), "pad": "x" * limit}).encode()
    response = client.post(
        f"/relay/{sub['id']}",
        input_stream=io.BytesIO(body),
        content_type="application/json",
        headers={"X-A2A-Notification-Token": sub["relayToken"], "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert response.status_code == 413, response.json
    assert response.json["error"] == {
        "code": "payload_too_large",
        "details": {"limit": limit},
        "message": f"the notification is over the limit of {limit} bytes",
    }
    assert _stored(services) == []


def test_other_methods_and_paths_under_relay_get_the_error_envelope(client, sub):
    read = client.get(f"/relay/{sub['id']}")
    assert read.status_code == 405 and read.json["error"]["code"] == "method_not_allowed"
    assert read.headers["Allow"] == "POST"
    nested = client.post(
        f"/relay/{sub['id']}/more",
        json=status_update("task-1"),
        headers={"X-A2A-Notification-Token": sub["relayToken"]},
    )
    assert nested.status_code == 404 and nested.json["error"]["code"] == "not_found"


def test_a_failure_inside_the_relay_is_a_500_in_the_envelope_and_logged(client, sub, relay, monkeypatch, caplog):
    def broken(notification):
        raise RuntimeError("the outbox is gone")

    monkeypatch.setattr(relay.ingress, "accept", broken)  # an internal bug, which no real peer can cause
    response = push(client, sub, status_update("task-1"))
    assert response.status_code == 500
    assert response.json["error"]["code"] == "internal_error"
    assert "the outbox is gone" in caplog.text


def test_a_wrong_secret_is_told_how_to_authenticate(client, sub):
    response = push(client, sub, status_update("task-1"), token="adxr_wrong")
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="agentdex"'
    assert (
        response.json["error"]["code"] == "unauthorized"
        and "X-A2A-Notification-Token" in response.json["error"]["message"]
    )


def test_415_when_not_json(client, sub):
    response = client.post(
        f"/relay/{sub['id']}",
        data="task done",
        content_type="text/plain",
        headers={"X-A2A-Notification-Token": sub["relayToken"]},
    )
    assert response.status_code == 415
    assert response.json["error"]["code"] == "unsupported_media_type"


def test_429_over_the_per_subscription_rate(client, sub, ticker):
    burst = 5  # relay_settings: rate 5/s, burst 5
    assert [push(client, sub, status_update("task-1")).status_code for _ in range(burst)] == [202] * burst
    refused = push(client, sub, status_update("task-1"))
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    ticker.now += 0.2  # one more token at 5/s
    assert push(client, sub, status_update("task-1")).status_code == 202


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        {"hello": "world"},
        {"task": "not an object"},
        {"statusUpdate": {"contextId": "c"}},
        {"task": {"id": "x"}, "message": {}},
    ],
)
def test_422_for_bodies_that_are_no_push_notification(client, relay_auth, push_agent, receiver, body):
    any_task = subscribe(client, relay_auth, push_agent, receiver.url)
    response = push(client, any_task, body)
    assert response.status_code == 422, response.json
    assert response.json["error"]["code"] == "invalid_notification"


def test_400_for_malformed_json(client, sub):
    response = client.post(
        f"/relay/{sub['id']}",
        data=b'{"task": ',
        content_type="application/json",
        headers={"X-A2A-Notification-Token": sub["relayToken"]},
    )
    assert response.status_code == 400


def test_rotation_keeps_the_old_token_for_the_grace_period(client, relay_auth, sub, clock):
    rotated = client.post(f"/v1/relay/subscriptions/{sub['id']}/rotate", headers=relay_auth).json
    assert rotated["relayToken"] != sub["relayToken"]
    assert rotated["previousTokenValidUntil"] is not None
    assert push(client, sub, status_update("task-1")).status_code == 202
    assert push(client, sub, status_update("task-1"), token=rotated["relayToken"]).status_code == 202
    clock.advance(601)  # relay_settings: 600 s of grace
    assert push(client, sub, status_update("task-1")).status_code == 401
    assert push(client, sub, status_update("task-1"), token=rotated["relayToken"]).status_code == 202


def test_a_disabled_subscription_still_accepts_so_nothing_is_lost(client, relay_auth, sub):
    client.patch(f"/v1/relay/subscriptions/{sub['id']}", json={"status": "disabled"}, headers=relay_auth)
    assert push(client, sub, status_update("task-1")).status_code == 202


def test_deleting_refuses_at_once_though_the_subscription_was_cached(client, relay_auth, sub):
    assert push(client, sub, status_update("task-1")).status_code == 202  # now cached by the ingress
    client.delete(f"/v1/relay/subscriptions/{sub['id']}", headers=relay_auth)
    assert push(client, sub, status_update("task-1")).status_code == 404


def test_a_token_rotated_by_another_process_works_at_once(client, relay_auth, sub, settings):
    assert push(client, sub, status_update("task-1")).status_code == 202  # now cached by this ingress
    other = build_services(settings)  # another registry process on the same database
    try:
        other_client = create_app(services=other).test_client()
        rotated = other_client.post(f"/v1/relay/subscriptions/{sub['id']}/rotate", headers=relay_auth).json
    finally:
        other.close()
    assert push(client, sub, status_update("task-1"), token=rotated["relayToken"]).status_code == 202
