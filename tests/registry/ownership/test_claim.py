"""Claiming a listing: B registered an agent on A's domain (under the default `open` policy, as
anyone could); A proves the domain through the API against a real loopback server and claims the
entry. It moves to A and nothing else about it changes; the audit row names both owners and an
`io.agentdex.agent.updated` event says `change: "owner"`. The previous owner reads the claim in
their own audit log; a third principal does not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from cli.main import cli
from registry.container import Services
from tests.registry.ownership.agent_owners import bearer, card_on, error_code, prove_domain
from tests.support.ard_publishers import ArdPublisher


@pytest.fixture
def squatted(client: Any, publisher: ArdPublisher, other_token: str) -> str:
    """B's entry for an agent on the publisher's domain."""
    url = publisher.put_json("/.well-known/agent-card.json", card_on(publisher, "Harbour Agent"))
    response = client.post("/v1/agents", json={"url": url}, headers=bearer(other_token))
    assert response.status_code == 201
    return str(response.get_json()["id"])


def agent_row(services: Services, agent_id: str) -> dict[str, Any]:
    with services.engine.connect() as conn:
        return dict(conn.execute(text("SELECT * FROM agents WHERE id = :id"), {"id": agent_id}).one()._mapping)


def principal_id(services: Services, name: str) -> int:
    with services.engine.connect() as conn:
        return int(conn.execute(text("SELECT id FROM principals WHERE name = :n"), {"n": name}).scalar_one())


def owner_events(services: Services, agent_id: str) -> list[dict[str, Any]]:
    """The change events not yet fanned out that tell an owner change of the agent."""
    with services.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT type, data FROM change_events WHERE agent_id = :id ORDER BY pk"), {"id": agent_id}
        )
        events = [(kind, data if isinstance(data, dict) else json.loads(data)) for kind, data in rows]
    return [dict(data, type=kind) for kind, data in events if data.get("change") == "owner"]


def test_the_domains_owner_claims_the_entry_and_nothing_else_changes(
    client: Any, services: Services, publisher: ArdPublisher, squatted: str, writer_token: str, admin_token: str
) -> None:
    before = agent_row(services, squatted)
    prove_domain(client, writer_token, publisher)
    claimed = client.post(f"/v1/agents/{squatted[:8]}/claim", headers=bearer(writer_token))
    assert claimed.status_code == 200
    assert claimed.get_json() == {"id": squatted, "owner": "alice", "claimed": True}

    after = agent_row(services, squatted)
    assert after["owner_id"] == principal_id(services, "alice")
    assert {**after, "owner_id": before["owner_id"]} == before  # nothing else, updated_at included

    audit = client.get(f"/v1/audit?agent={squatted}", headers=bearer(admin_token)).get_json()["items"]
    (claim,) = [entry for entry in audit if entry["action"] == "agent.claim"]
    assert claim["actor"] == "alice"
    assert claim["detail"] == {
        "previousOwner": "bob",
        "previousOwnerId": principal_id(services, "bob"),
        "newOwner": "alice",
        "newOwnerId": principal_id(services, "alice"),
    }
    (event,) = owner_events(services, squatted)
    assert event["type"] == "io.agentdex.agent.updated" and event["ownerId"] == principal_id(services, "alice")


def test_the_previous_owner_reads_the_claim_in_their_audit_log_and_no_one_else_does(
    registry_url: str,
    client: Any,
    services: Services,
    publisher: ArdPublisher,
    squatted: str,
    writer_token: str,
    other_token: str,
    admin_token: str,
) -> None:
    prove_domain(client, writer_token, publisher)
    assert client.post(f"/v1/agents/{squatted}/claim", headers=bearer(writer_token)).status_code == 200

    def claims(token: str) -> list[tuple[Any, ...]]:
        items = client.get("/v1/audit?action=agent.claim", headers=bearer(token)).get_json()["items"]
        return [
            (entry["actor"], entry["agentId"], entry["detail"]["previousOwner"], entry["detail"]["newOwner"])
            for entry in items
        ]

    told = ("alice", squatted, "bob", "alice")
    assert claims(other_token) == [told]  # bob, whose entry it was
    assert claims(writer_token) == [told]  # alice, who claimed it
    assert claims(admin_token) == [told]
    carol = services.tokens.create("carol", ["agents:write"]).token
    assert claims(carol) == []
    assert client.get("/v1/audit", headers=bearer(carol)).get_json()["items"] == []  # nor bob's registration
    bobs = [entry["action"] for entry in client.get("/v1/audit", headers=bearer(other_token)).get_json()["items"]]
    assert bobs == ["agent.register", "agent.claim"]  # not alice's domain proof

    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": other_token}
    shown = CliRunner().invoke(cli, ["audit", "--action", "agent.claim", "--json"], env=env)
    assert shown.exit_code == 0, shown.output
    assert [entry["detail"]["previousOwner"] for entry in json.loads(shown.output)["items"]] == ["bob"]


def test_the_entry_is_then_the_new_owners_to_change(
    client: Any, publisher: ArdPublisher, squatted: str, writer_token: str, other_token: str
) -> None:
    prove_domain(client, writer_token, publisher)
    assert client.post(f"/v1/agents/{squatted}/claim", headers=bearer(writer_token)).status_code == 200
    previous = client.patch(f"/v1/agents/{squatted}", json={"status": "deprecated"}, headers=bearer(other_token))
    assert previous.status_code == 403
    new = client.patch(f"/v1/agents/{squatted}", json={"status": "deprecated"}, headers=bearer(writer_token))
    assert new.status_code == 200 and new.get_json()["status"] == "deprecated"


def test_claiming_what_one_holds_changes_nothing(
    client: Any, services: Services, publisher: ArdPublisher, squatted: str, writer_token: str
) -> None:
    prove_domain(client, writer_token, publisher)
    client.post(f"/v1/agents/{squatted}/claim", headers=bearer(writer_token))
    again = client.post(f"/v1/agents/{squatted}/claim", headers=bearer(writer_token))
    assert again.get_json() == {"id": squatted, "owner": "alice", "claimed": False}
    assert len(owner_events(services, squatted)) == 1


def test_without_the_domain_no_one_claims_not_even_an_admin(
    client: Any, services: Services, squatted: str, writer_token: str, admin_token: str
) -> None:
    before = agent_row(services, squatted)
    for token in (writer_token, admin_token):
        refused = client.post(f"/v1/agents/{squatted}/claim", headers=bearer(token))
        assert refused.status_code == 403 and error_code(refused) == "not_domain_owner"
    assert agent_row(services, squatted) == before and owner_events(services, squatted) == []


def test_the_cli_claims(
    registry_url: str, client: Any, publisher: ArdPublisher, squatted: str, writer_token: str
) -> None:
    prove_domain(client, writer_token, publisher)
    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": writer_token}
    result = CliRunner().invoke(cli, ["agents", "claim", squatted[:8]], env=env)
    assert result.exit_code == 0 and result.output == f"{squatted} is now alice's\n"
    again = CliRunner().invoke(cli, ["agents", "claim", squatted[:8]], env=env)
    assert again.output == f"{squatted} was alice's already\n"
