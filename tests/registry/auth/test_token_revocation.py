"""Tokens an admin can see and revoke: `GET /v1/tokens` and `DELETE /v1/tokens/<id>` never show a
token or its hash, and a revoked token is refused with 401 saying so, at once. (A caller's own
tokens, expiry, last use, domains and other processes: test_token_lifecycle*.py.)"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from registry.audit import AuditEntry
from registry.errors import AmbiguousId, NotFound
from tests.support.cards import make_card


@pytest.fixture
def admin(admin_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {admin_token}"}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_an_admin_lists_tokens_without_their_secrets(client, admin, writer_token):
    listed = client.get("/v1/tokens", headers=admin)
    assert listed.status_code == 200
    by_name = {item["name"]: item for item in listed.json["items"]}
    assert by_name["alice"]["scopes"] == ["agents:write"] and by_name["alice"]["principal"] == "alice"
    assert by_name["root"]["scopes"] == ["admin"] and by_name["alice"]["revokedAt"] is None
    assert writer_token.startswith(by_name["alice"]["prefix"])
    assert writer_token not in listed.text and "adx_" + writer_token[10:20] not in listed.text
    assert not re.search(r"[0-9a-f]{64}", listed.text)  # no SHA-256 of any token either


def test_a_caller_without_a_token_sees_nothing(client):
    anonymous = client.get("/v1/tokens")
    assert anonymous.status_code == 401 and anonymous.json["error"]["code"] == "unauthorized"
    assert client.delete("/v1/tokens/1").status_code == 401


def test_a_revoked_token_is_refused_at_once_and_says_why(client, admin, services):
    token = services.tokens.create("ci", ["agents:write"]).token
    card = {"card": make_card("CI Agent"), "cardUrl": "https://ci.example/card.json"}
    created = client.post("/v1/agents", json=card, headers=_bearer(token))
    assert created.status_code == 201
    token_id = next(i["id"] for i in client.get("/v1/tokens", headers=admin).json["items"] if i["name"] == "ci")

    revoked = client.delete(f"/v1/tokens/{token_id}", headers=admin)
    assert revoked.status_code == 200 and revoked.json["revokedAt"] and revoked.json["revokedNow"] is True
    refused = client.delete(f"/v1/agents/{created.json['id']}", headers=_bearer(token))
    assert refused.status_code == 401
    assert refused.json["error"]["code"] == "token_revoked" and "revoked" in refused.json["error"]["message"]

    again = client.delete(f"/v1/tokens/{token_id}", headers=admin)
    assert again.status_code == 200 and again.json["revokedAt"] == revoked.json["revokedAt"]
    assert again.json["revokedNow"] is False
    with services.sessions() as session:
        actions = session.scalars(select(AuditEntry.action).where(AuditEntry.action == "token.revoke")).all()
    assert actions == ["token.revoke"]  # once: the second call changed nothing


def test_revoked_tokens_leave_the_list_unless_asked_for(client, admin, writer_token):
    alice = next(i for i in client.get("/v1/tokens", headers=admin).json["items"] if i["name"] == "alice")
    client.delete(f"/v1/tokens/{alice['id']}", headers=admin)
    assert "alice" not in [i["name"] for i in client.get("/v1/tokens", headers=admin).json["items"]]
    everything = client.get("/v1/tokens?includeRevoked=true", headers=admin).json["items"]
    assert [i["revokedAt"] is not None for i in everything if i["name"] == "alice"] == [True]


def test_tokens_page_with_a_cursor(client, admin, services):
    for n in range(3):
        services.tokens.create(f"t{n}", ["relay"])
    first = client.get("/v1/tokens?limit=2", headers=admin).json
    second = client.get(f"/v1/tokens?limit=2&cursor={first['nextCursor']}", headers=admin).json
    names = [i["name"] for i in first["items"] + second["items"]]
    assert names == ["root", "t0", "t1", "t2"] and second["nextCursor"] is None


@pytest.mark.parametrize("token_id", ["999", "alice", "9" * 40, "²", "１２"])
def test_revoking_an_unknown_token_is_not_found(client, admin, token_id):
    response = client.delete(f"/v1/tokens/{token_id}", headers=admin)
    assert response.status_code == 404 and "GET /v1/tokens" in response.json["error"]["message"]


def test_a_token_is_found_by_id_or_by_a_name_only_one_live_token_has(services):
    first = services.tokens.create("deploy", ["relay"])
    services.tokens.create("deploy", ["relay"])
    with pytest.raises(AmbiguousId, match="give the id"):
        services.tokens.find("deploy")
    ids = [info.id for info in services.tokens.listed() if info.name == "deploy"]
    services.tokens.revoke(ids[0])
    assert services.tokens.find("deploy").id == ids[1]
    assert services.tokens.find(str(ids[0])).revoked_at is not None
    assert first.token.startswith(services.tokens.find(str(ids[0])).prefix)
    with pytest.raises(NotFound):
        services.tokens.find("nobody")


@pytest.mark.parametrize("ref", ["9" * 40, "²", "9223372036854775808"])
def test_digits_that_can_be_no_token_id_are_not_found(services, ref):
    with pytest.raises(NotFound):  # not the driver's OverflowError, not int()'s ValueError
        services.tokens.find(ref)


def test_every_token_route_is_in_the_openapi_document(app, client):
    documented = client.get("/openapi.json").json["paths"]
    routes = {re.sub(r"<(\w+)>", r"{\1}", rule.rule) for rule in app.url_map.iter_rules() if "tokens" in rule.rule}
    assert routes == {"/v1/tokens", "/v1/tokens/{token_id}"} and routes <= set(documented)
