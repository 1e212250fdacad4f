"""`GET /v1/audit`: an admin reads who did what, in order, page by page; filters narrow it. Any
other token reads the entries about its principal only."""

from __future__ import annotations

import datetime as dt

import pytest

from registry.api.openapi import openapi_document
from tests.support.cards import make_card


def _register(client, auth, name: str, host: str) -> str:  # type: ignore[no-untyped-def]
    body = {
        "card": make_card(name, url=f"https://{host}/a2a"),
        "cardUrl": f"https://{host}/.well-known/agent-card.json",
    }
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


@pytest.fixture
def scripted(client, auth, admin_token, services):  # type: ignore[no-untyped-def]
    """alice registers two agents, deprecates and deletes the first; root revokes bob's token."""
    first = _register(client, auth, "First", "first.example.com")
    second = _register(client, auth, "Second", "second.example.com")
    assert client.patch(f"/v1/agents/{first}", json={"status": "deprecated"}, headers=auth).status_code == 200
    assert client.delete(f"/v1/agents/{first}", headers=auth).status_code == 204
    bob = services.tokens.create("bob", ["agents:write"])
    bob_id = services.tokens.find("bob").id
    admin = {"Authorization": f"Bearer {admin_token}"}
    assert client.delete(f"/v1/tokens/{bob_id}", headers=admin).status_code == 200
    assert bob.token
    return {"first": first, "second": second, "admin": admin}


def _pages(client, admin, query: str = "", limit: int = 2) -> list[dict]:  # type: ignore[no-untyped-def]
    items, cursor = [], None
    while True:
        url = f"/v1/audit?limit={limit}{query}" + (f"&cursor={cursor}" if cursor else "")
        response = client.get(url, headers=admin)
        assert response.status_code == 200, response.json
        assert len(response.json["items"]) <= limit
        items.extend(response.json["items"])
        cursor = response.json["nextCursor"]
        if cursor is None:
            return items


def test_an_admin_reads_the_whole_sequence_in_order_page_by_page(client, scripted):  # type: ignore[no-untyped-def]
    items = _pages(client, scripted["admin"])
    seen = [(i["actor"], i["action"], i["agentId"]) for i in items]
    first, second = scripted["first"], scripted["second"]
    assert seen == [
        ("alice", "agent.register", first),
        ("alice", "agent.register", second),
        ("alice", "agent.status", first),
        ("alice", "agent.delete", first),
        ("root", "token.revoke", None),
    ]
    assert [i["id"] for i in items] == sorted(i["id"] for i in items)
    assert items[2]["detail"]["status"] == "deprecated"
    assert items[3]["detail"]["name"] == "First"  # the entry outlives the agent it names
    times = [dt.datetime.fromisoformat(i["at"]) for i in items]
    assert times == sorted(times) and all(t.tzinfo is not None for t in times)
    assert set(items[0]) == {"id", "at", "actor", "action", "agentId", "detail"}


def test_filters_narrow_the_log(client, scripted):  # type: ignore[no-untyped-def]
    admin, first = scripted["admin"], scripted["first"]
    by_agent = _pages(client, admin, f"&agent={first}")
    assert [i["action"] for i in by_agent] == ["agent.register", "agent.status", "agent.delete"]
    assert [i["action"] for i in _pages(client, admin, f"&agent={first[:8]}")] == [i["action"] for i in by_agent]
    assert [i["action"] for i in _pages(client, admin, "&actor=root")] == ["token.revoke"]
    assert _pages(client, admin, "&actor=nobody") == []
    assert len(_pages(client, admin, "&action=agent.register")) == 2
    assert [i["action"] for i in _pages(client, admin, "&action=agent.*")][-1] == "agent.delete"
    assert len(_pages(client, admin, "&action=agent.*")) == 4
    everything = _pages(client, admin, limit=100)
    cut = everything[3]["at"]
    assert [i["id"] for i in _pages(client, admin, f"&since={cut}")] == [i["id"] for i in everything if i["at"] >= cut]
    assert [i["id"] for i in _pages(client, admin, f"&until={cut}")] == [i["id"] for i in everything if i["at"] < cut]
    combined = _pages(client, admin, f"&actor=alice&action=agent.register&agent={scripted['second']}")
    assert [i["agentId"] for i in combined] == [scripted["second"]]


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("since=yesterday", "since"),
        ("until=2026-13-01T00:00:00Z", "until"),
        ("since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "until"),
        ("agent=abc", "agent"),
        ("agent=not-an-id!", "agent"),
        ("action=Agent Register", "action"),
        ("actor=", "actor"),
    ],
)
def test_bad_filters_are_refused_naming_the_parameter(client, admin_token, query, parameter):  # type: ignore[no-untyped-def]
    """As every query parameter of the API: a value that is wrong is 422 invalid_request."""
    response = client.get(f"/v1/audit?{query}", headers={"Authorization": f"Bearer {admin_token}"})
    assert response.status_code == 422
    assert response.json["error"]["code"] == "invalid_request"
    assert response.json["error"]["details"]["parameter"] == parameter
    assert parameter in response.json["error"]["message"]


def test_other_query_parameters_and_foreign_cursors_are_refused(client, admin_token):  # type: ignore[no-untyped-def]
    admin = {"Authorization": f"Bearer {admin_token}"}
    unknown = client.get("/v1/audit?who=root", headers=admin)
    assert (unknown.status_code, unknown.json["error"]["code"]) == (400, "bad_request")
    assert client.get("/v1/audit?cursor=bm90LW91cnM", headers=admin).json["error"]["code"] == "invalid_request"
    assert client.get("/v1/audit?limit=0", headers=admin).status_code == 422


def test_a_token_that_is_not_an_admins_reads_only_the_entries_about_its_principal(client, auth, scripted, services):  # type: ignore[no-untyped-def]
    assert client.get("/v1/audit").status_code == 401
    alices = _pages(client, auth)
    assert [(i["actor"], i["action"]) for i in alices] == [("alice", "agent.register")] * 2 + [
        ("alice", "agent.status"),
        ("alice", "agent.delete"),
    ]  # not root's revocation of bob's token
    assert [i["action"] for i in _pages(client, auth, f"&agent={scripted['first']}")] == [
        "agent.register",
        "agent.status",
        "agent.delete",
    ]
    assert _pages(client, auth, "&actor=root") == []
    carol = {"Authorization": f"Bearer {services.tokens.create('carol', ['metrics:read']).token}"}
    assert _pages(client, carol) == []


def test_the_registry_itself_is_an_actor_of_its_own(client, admin_token, services):  # type: ignore[no-untyped-def]
    from registry.audit import AuditEntry

    with services.sessions.begin() as session:
        session.add(AuditEntry(at=dt.datetime.now(dt.UTC), principal_id=None, action="card.recrawl", detail={}))
    items = client.get("/v1/audit", headers={"Authorization": f"Bearer {admin_token}"}).json["items"]
    assert [(i["actor"], i["action"]) for i in items] == [(None, "card.recrawl")]


def test_the_openapi_document_describes_it(client):  # type: ignore[no-untyped-def]
    served = client.get("/openapi.json").json
    assert served == openapi_document()
    operation = served["paths"]["/v1/audit"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {
        "actor",
        "agent",
        "action",
        "since",
        "until",
        "limit",
        "cursor",
    }
    assert operation["security"] == [{"bearer": []}]
    assert set(served["components"]["schemas"]["AuditEntry"]["required"]) == {
        "id",
        "at",
        "actor",
        "action",
        "agentId",
        "detail",
    }
