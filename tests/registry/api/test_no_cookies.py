"""The API keeps no cookie session: bearer tokens authenticate every request, so no response sets
a cookie or varies on one, even when a client sends a session cookie signed with the app's key."""

from __future__ import annotations

import pytest
from flask.sessions import SecureCookieSessionInterface

from tests.support.cards import make_card


def _no_cookie_headers(response) -> None:  # type: ignore[no-untyped-def]
    assert "Set-Cookie" not in response.headers
    assert "Cookie" not in response.headers.get("Vary", "")


@pytest.fixture(params=["no cookie", "permanent session cookie"])
def cookie_client(request, app, client):  # type: ignore[no-untyped-def]
    """The test client, optionally carrying a permanent session cookie that the app's own secret
    key signed (e.g. from a web page on the same host): Flask's default sessions refresh such a
    cookie on every response."""
    if request.param == "permanent session cookie":
        signer = SecureCookieSessionInterface().get_signing_serializer(app)
        assert signer is not None
        client.set_cookie(app.config["SESSION_COOKIE_NAME"], signer.dumps({"_permanent": True}))
    return client


def test_registration_response_sets_no_cookie(cookie_client, auth):  # type: ignore[no-untyped-def]
    response = cookie_client.post(
        "/v1/agents",
        json={"card": make_card("Cookie-free Agent"), "cardUrl": "https://nocookie.example/card.json"},
        headers=auth,
    )
    assert response.status_code == 201, response.json
    _no_cookie_headers(response)


def test_search_response_sets_no_cookie(cookie_client, auth):  # type: ignore[no-untyped-def]
    created = cookie_client.post(
        "/v1/agents",
        json={"card": make_card("Findable Agent"), "cardUrl": "https://findable.example/card.json"},
        headers=auth,
    )
    assert created.status_code == 201, created.json
    response = cookie_client.get("/v1/agents?q=findable")
    assert response.status_code == 200, response.json
    assert [agent["name"] for agent in response.json["items"]] == ["Findable Agent"]
    _no_cookie_headers(response)
