"""The relay's small parts: body shapes, sealed secrets, relay tokens, the rate limit, back-off."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from registry.relay import InvalidNotification
from registry.relay.bodies import classify
from registry.relay.delivery import RetryPolicy, parse_retry_after
from registry.relay.ingress import RateLimiter
from registry.relay.secret_box import SecretBox, SecretBoxError
from registry.relay.subscriptions import TokenHashes, hash_relay_token, new_relay_token
from registry.settings import DEFAULT_RETRY_SCHEDULE, RelaySettings, Settings, SettingsError

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("body", "kind", "task"),
    [
        ({"task": {"id": "t1"}}, "task", "t1"),
        ({"statusUpdate": {"taskId": "t1"}}, "statusUpdate", "t1"),
        ({"status_update": {"task_id": "t1"}}, "statusUpdate", "t1"),
        ({"artifactUpdate": {"taskId": "t1"}}, "artifactUpdate", "t1"),
        ({"message": {"messageId": "m"}}, "message", None),
        ({"id": "t1", "status": {"state": "completed"}, "kind": "task"}, "task", "t1"),
        ({"id": "t1", "status": {"state": "working"}}, "task", "t1"),  # 0.2-era Task without kind
        ({"kind": "status-update", "taskId": "t1", "status": {}}, "statusUpdate", "t1"),
    ],
)
def test_classify_reads_kind_and_task(body, kind, task):
    found = classify(body)
    assert (found.kind, found.task_id) == (kind, task)


@pytest.mark.parametrize(
    "body",
    [
        {"kind": ["task"]},
        {"kind": {}},
        {"id": "t", "status": {}, "kind": "weird"},
        {"id": ["t"], "status": 1},
        {"status": {}},
    ],
)
def test_classify_refuses_odd_shapes_with_a_typed_error(body):
    with pytest.raises(InvalidNotification):
        classify(body)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["kind", "id", "status", "taskId", "task", "statusUpdate", "message", "artifactUpdate", "x"]
                )
                | st.text(max_size=6),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_classify_either_answers_or_refuses_with_a_typed_error(body):
    try:
        found = classify(body)
    except InvalidNotification:
        return
    assert found.task_id is None or isinstance(found.task_id, str)


def test_secret_box_round_trip_and_binding():
    box = SecretBox("a-secret-key-of-some-length")
    sealed = box.seal({"token": "t", "authorization": "Bearer x"}, "sub_1")
    assert box.open(sealed, "sub_1") == {"token": "t", "authorization": "Bearer x"}
    with pytest.raises(SecretBoxError):
        box.open(sealed, "sub_2")  # copied onto another row
    with pytest.raises(SecretBoxError):
        SecretBox("another-secret-key-entirely").open(sealed, "sub_1")
    with pytest.raises(SecretBoxError):
        box.open(sealed[:-1] + bytes([sealed[-1] ^ 1]), "sub_1")


def test_relay_tokens_are_long_random_and_checked_with_grace():
    token = new_relay_token()
    assert len(token) >= 43 and token != new_relay_token()
    old = new_relay_token()
    hashes = TokenHashes(hash_relay_token(token), hash_relay_token(old), NOW + dt.timedelta(seconds=60))
    assert hashes.accepts(token, NOW) and hashes.accepts(old, NOW)
    assert not hashes.accepts(old, NOW + dt.timedelta(seconds=60))
    assert not hashes.accepts("adxr_guess", NOW)
    assert not TokenHashes(None).accepts("", NOW)


def test_rate_limiter_admits_the_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(2.0, 3, monotonic=lambda: now[0])
    assert [limiter.admit("s") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.admit("s") == pytest.approx(0.5)
    assert limiter.admit("other") == 0.0
    now[0] += 0.5
    assert limiter.admit("s") == 0.0


def test_back_off_follows_the_schedule_within_the_jitter():
    policy = RetryPolicy(DEFAULT_RETRY_SCHEDULE, jitter=0.2, max_retry_after=3600)
    rng = random.Random(1)
    for attempts, base in enumerate(DEFAULT_RETRY_SCHEDULE[1:], start=1):
        for _ in range(50):
            delay = policy.next_delay(attempts, None, rng)
            assert delay is not None and base * 0.8 <= delay <= base * 1.2
    assert policy.next_delay(len(DEFAULT_RETRY_SCHEDULE), None, rng) is None
    assert policy.next_delay(1, 0.0, rng) == 1.0 and policy.next_delay(1, 1e9, rng) == 3600


def test_retry_after_reads_seconds_and_http_dates():
    assert parse_retry_after("120", NOW) == 120
    assert parse_retry_after("Sun, 01 Mar 2026 12:01:00 GMT", NOW) == 60
    assert parse_retry_after("soon", NOW) is None and parse_retry_after(None, NOW) is None


def test_relay_settings_from_the_environment():
    env = {
        "AGENTDEX_SECRET_KEY": "x" * 20,
        "AGENTDEX_DATABASE_URL": "postgresql://db/x",
        "AGENTDEX_RELAY_RETRY_SCHEDULE": "0,1,2",
        "AGENTDEX_RELAY_JITTER": "0",
        "AGENTDEX_RELAY_RATE": "9.5",
    }
    relay = Settings.from_env(env).relay
    assert (relay.retry_schedule, relay.jitter, relay.rate) == ((0.0, 1.0, 2.0), 0.0, 9.5)
    for bad in (
        {"AGENTDEX_RELAY_RETRY_SCHEDULE": "0,soon"},
        {"AGENTDEX_RELAY_JITTER": "1.5"},
        {"AGENTDEX_RELAY_LEASE_SECONDS": "10"},
    ):
        with pytest.raises(SettingsError):
            Settings.from_env({**env, **bad})
    assert RelaySettings().max_body_bytes == 256 * 1024
