"""A token's life as its owner sees it over the API: each caller lists and revokes its own tokens
(an admin everyone's, and no one learns of another's), tokens may expire, their last use is kept
to the minute without a write on every request, and a revocation made anywhere is refused by the
next request of any process (no actor is cached)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import event

from registry.auth import TokenExpired, TokenRevoked, TokenService
from registry.db.types import utcnow
from registry.errors import InvalidRequest


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _names(response) -> list[str]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.json
    return [item["name"] for item in response.json["items"]]


def test_a_caller_lists_its_own_tokens_and_an_admin_everyones(client, services, writer_token, other_token, admin_token):
    services.tokens.create("alice-ci", ["relay"], principal="alice")
    assert _names(client.get("/v1/tokens", headers=_bearer(writer_token))) == ["alice", "alice-ci"]
    assert _names(client.get("/v1/tokens", headers=_bearer(other_token))) == ["bob"]
    assert _names(client.get("/v1/tokens", headers=_bearer(admin_token))) == ["alice", "bob", "root", "alice-ci"]
    item = client.get("/v1/tokens", headers=_bearer(writer_token)).json["items"][0]
    assert set(item) == {
        "id", "name", "principal", "scopes", "domains", "prefix", "createdAt", "lastUsedAt", "expiresAt", "revokedAt"
    }  # fmt: skip
    assert writer_token not in str(item) and item["prefix"] == writer_token[:10]


def test_a_caller_revokes_its_own_token_and_cannot_reach_anothers(client, services, writer_token, other_token):
    spare = services.tokens.create("alice-spare", ["relay"], principal="alice")
    mine = {i["name"]: i["id"] for i in client.get("/v1/tokens", headers=_bearer(writer_token)).json["items"]}
    bobs = client.get("/v1/tokens", headers=_bearer(other_token)).json["items"][0]["id"]

    refused = client.delete(f"/v1/tokens/{bobs}", headers=_bearer(writer_token))
    unknown = client.delete("/v1/tokens/9999", headers=_bearer(writer_token))
    assert refused.status_code == unknown.status_code == 404  # the same answer: bob's token is not told of
    assert refused.json["error"]["message"].replace(str(bobs), "N") == unknown.json["error"]["message"].replace(
        "9999", "N"
    )
    assert client.get("/v1/tokens", headers=_bearer(other_token)).status_code == 200  # bob's still works

    revoked = client.delete(f"/v1/tokens/{mine['alice-spare']}", headers=_bearer(writer_token))
    assert revoked.status_code == 200 and revoked.json["revokedNow"] is True
    refused = client.get("/v1/tokens", headers=_bearer(spare.token))
    assert refused.status_code == 401 and refused.json["error"]["code"] == "token_revoked"
    assert _names(client.get("/v1/tokens?includeRevoked=true", headers=_bearer(writer_token))) == [
        "alice",
        "alice-spare",
    ]


def test_an_admin_revokes_anyones_token(client, other_token, admin_token):
    bobs = client.get("/v1/tokens", headers=_bearer(other_token)).json["items"][0]["id"]
    assert client.delete(f"/v1/tokens/{bobs}", headers=_bearer(admin_token)).status_code == 200
    assert client.get("/v1/tokens", headers=_bearer(other_token)).json["error"]["code"] == "token_revoked"


def test_an_expired_token_is_refused_saying_so(client, services):
    two_hours_ago = TokenService(services.sessions, clock=lambda: utcnow() - dt.timedelta(hours=2))
    expired = two_hours_ago.create("old", ["agents:write"], expires_in=dt.timedelta(hours=1))
    live = services.tokens.create("new", ["agents:write"], expires_in=dt.timedelta(hours=1))

    refused = client.get("/v1/tokens", headers=_bearer(expired.token))
    assert refused.status_code == 401 and refused.json["error"]["code"] == "token_expired"
    assert "expired at" in refused.json["error"]["message"] and "--expires" in refused.json["error"]["message"]
    listed = client.get("/v1/tokens", headers=_bearer(live.token))
    assert listed.status_code == 200
    assert listed.json["items"][0]["expiresAt"] == live.to_dict()["expiresAt"]


def test_a_token_stops_working_at_its_expiry(services):
    now = [utcnow()]
    tokens = TokenService(services.sessions, clock=lambda: now[0])
    issued = tokens.create("short", ["relay"], expires_in=dt.timedelta(minutes=10))
    assert tokens.authenticate(issued.token).principal_name == "short"
    now[0] += dt.timedelta(minutes=10)
    with pytest.raises(TokenExpired, match="expired at"):
        tokens.authenticate(issued.token)


@pytest.mark.parametrize("lifetime", [dt.timedelta(0), dt.timedelta(seconds=-1)])
def test_a_lifetime_must_be_positive(services, lifetime):
    with pytest.raises(InvalidRequest, match="positive"):
        services.tokens.create("never", ["relay"], expires_in=lifetime)


def test_last_use_is_kept_to_the_minute_without_a_write_per_request(services):
    now = [dt.datetime(2026, 11, 1, 12, 0, 0, tzinfo=dt.UTC)]
    tokens = TokenService(services.sessions, clock=lambda: now[0])
    issued = tokens.create("busy", ["relay"])
    assert tokens.listed()[0].last_used_at is None
    writes = _statements(services, "UPDATE api_tokens")

    tokens.authenticate(issued.token)
    for _ in range(5):
        now[0] += dt.timedelta(seconds=10)
        tokens.authenticate(issued.token)
    assert tokens.listed()[0].last_used_at == dt.datetime(2026, 11, 1, 12, 0, 0, tzinfo=dt.UTC)
    now[0] += dt.timedelta(seconds=10)  # a minute after the first use
    tokens.authenticate(issued.token)
    assert tokens.listed()[0].last_used_at == dt.datetime(2026, 11, 1, 12, 1, 0, tzinfo=dt.UTC)
    assert len(writes) == 2  # seven requests, two writes


def test_the_api_shows_when_a_token_was_last_used(client, writer_token):
    shown = client.get("/v1/tokens", headers=_bearer(writer_token)).json["items"][0]["lastUsedAt"]
    assert shown is not None and abs(dt.datetime.fromisoformat(shown) - utcnow()) < dt.timedelta(minutes=1)


def test_a_revocation_is_refused_by_the_next_request_of_another_service(services):
    """Another web process is another TokenService on the same database: it caches nothing."""
    elsewhere = TokenService(services.sessions)
    issued = services.tokens.create("ci", ["agents:write"])
    assert elsewhere.authenticate(issued.token).principal_name == "ci"
    services.tokens.revoke(services.tokens.find("ci").id)  # as `agentdex tokens revoke` does, at the database
    with pytest.raises(TokenRevoked, match="revoked"):
        elsewhere.authenticate(issued.token)


def _statements(services, prefix: str) -> list[str]:  # type: ignore[no-untyped-def]
    seen: list[str] = []

    def note(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith(prefix):
            seen.append(statement)

    event.listen(services.engine, "before_cursor_execute", note)
    return seen
