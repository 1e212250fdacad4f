"""Every answer carries `X-Request-Id`: the API's, its errors', the web catalog's and the relay
ingress's (served in front of Flask); a sane id the caller sent is kept, anything else replaced."""

from __future__ import annotations

import re

import pytest

from registry.observability import accepted_request_id

GENERATED = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/v1/agents/no-such-agent", 404),
        ("GET", "/v1/audit", 401),
        ("POST", "/relay/sub_unknown", 415),  # the relay ingress, before Flask
        ("GET", "/relay/sub_unknown", 405),
    ],
)
def test_every_answer_carries_a_fresh_request_id(client, method, path, status):  # type: ignore[no-untyped-def]
    first = client.open(path, method=method)
    second = client.open(path, method=method)
    assert first.status_code == status
    assert GENERATED.fullmatch(first.headers["X-Request-Id"])
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]
    assert first.headers.getlist("X-Request-Id") == [first.headers["X-Request-Id"]]


def test_a_sane_incoming_id_is_kept_on_the_api_and_the_relay_ingress(client):  # type: ignore[no-untyped-def]
    for path, method in (("/healthz", "GET"), ("/relay/sub_unknown", "POST")):
        answered = client.open(path, method=method, headers={"X-Request-Id": "lb-7f3a:42/retry=1"})
        assert answered.headers["X-Request-Id"] == "lb-7f3a:42/retry=1"


@pytest.mark.parametrize(
    "incoming",
    ["", "x" * 129, "has space", 'quote"d', "semi;colon", "new\\nline", "-leading-dash", "héllo", "{json}"],
)
def test_an_insane_incoming_id_is_replaced(client, incoming):  # type: ignore[no-untyped-def]
    answered = client.get("/healthz", headers={"X-Request-Id": incoming})
    assert GENERATED.fullmatch(answered.headers["X-Request-Id"])


def test_the_bounds_of_a_sane_id():  # type: ignore[no-untyped-def]
    assert accepted_request_id("a" * 128) == "a" * 128
    assert accepted_request_id("a" * 129) is None
    assert accepted_request_id("0f8e-uuid_like.1") == "0f8e-uuid_like.1"
    assert accepted_request_id("line\nbreak") is None
    assert accepted_request_id(None) is None
