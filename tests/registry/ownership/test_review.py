"""Under `AGENTDEX_OWNERSHIP=review`: anyone may submit, an entry whose domain the submitter has not
proven waits as `pending` and is in no search, web page, ARD manifest or find-agents answer until
the domain's proven owner (or an admin) approves it; a rejected entry keeps its reason. A's domain
is proven through the API against a real loopback server; B submits on it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from registry import change_events
from registry.catalog import UNLISTED
from registry.change_events import PREFIX, ChangeEvent
from registry.settings import Settings
from tests.registry.ownership.agent_owners import bearer, card_on, error_code, prove_domain, with_policy
from tests.support.a2a_calls import names, send
from tests.support.ard_publishers import ArdPublisher
from tests.support.waiting import wait_for

NAME = "Harbour Pilot"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return with_policy(settings, "review")


@pytest.fixture
def submitted(client: Any, publisher: ArdPublisher, writer_token: str, other_token: str) -> str:
    """A (alice) holds the publisher's domain; B (bob) submits an agent on it: pending."""
    prove_domain(client, writer_token, publisher)
    url = publisher.put_json("/pilot/card.json", card_on(publisher, NAME, tags=["harbour"]))
    response = client.post("/v1/agents", json={"url": url}, headers=bearer(other_token))
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["status"] == "pending"
    return str(response.get_json()["id"])


def listed_everywhere(client: Any, agent_id: str) -> dict[str, bool]:
    """Whether the agent shows on each public surface."""
    manifest = client.get("/.well-known/ard.json").get_data(as_text=True)
    return {
        "search": agent_id in _ids(client.get("/v1/agents").get_json()),
        "search, any status": agent_id in _ids(client.get("/v1/agents?status=any").get_json()),
        "text search": agent_id in _ids(client.get("/v1/agents", query_string={"q": "harbour pilot"}).get_json()),
        "tag search": agent_id in _ids(client.get("/v1/agents?tag=harbour").get_json()),
        "web catalog": NAME in client.get("/", query_string={"q": "harbour"}).get_data(as_text=True),
        "web agent page": client.get(f"/agents/{agent_id}").status_code == 200,
        "ard manifest": NAME in manifest,
        "a2a find-agents": NAME in names(send(client, data={"q": "harbour pilot"})),
        "ard search": NAME
        in client.post("/ard/search", json={"query": {"text": "harbour pilot"}}).get_data(as_text=True),
        "read by id": client.get(f"/v1/agents/{agent_id}").status_code == 200,
    }


def _ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def test_a_pending_entry_is_nowhere_until_the_domain_owner_approves_it(
    client: Any, submitted: str, writer_token: str
) -> None:
    assert not any(listed_everywhere(client, submitted).values()), listed_everywhere(client, submitted)
    approved = client.post(f"/v1/agents/{submitted}/approve", headers=bearer(writer_token))
    assert approved.status_code == 200 and approved.get_json()["status"] == "active"
    # The manifest's pages are rebuilt when each process next checks the catalog's change marker.
    assert wait_for(lambda: all(listed_everywhere(client, submitted).values()), 5), listed_everywhere(client, submitted)


def test_who_sees_a_pending_entry(client: Any, services: Any, submitted: str, writer_token: str) -> None:
    carol = services.tokens.create("carol", ["agents:write"]).token
    assert client.get(f"/v1/agents/{submitted}", headers=bearer(writer_token)).get_json()["status"] == "pending"
    assert client.get(f"/v1/agents/{submitted}", headers=bearer(carol)).status_code == 404
    pending = client.get("/v1/agents?status=pending", headers=bearer(writer_token)).get_json()
    assert _ids(pending) == [submitted]
    assert _ids(client.get("/v1/agents?status=pending", headers=bearer(carol)).get_json()) == []
    assert client.get("/v1/agents?status=pending").status_code == 401


def test_the_submitter_reads_their_entry_and_cannot_approve_it(client: Any, submitted: str, other_token: str) -> None:
    own = client.get(f"/v1/agents/{submitted}", headers=bearer(other_token))
    assert own.status_code == 200 and own.get_json()["status"] == "pending"
    assert client.get(f"/v1/agents/{submitted}/card", headers=bearer(other_token)).status_code == 200
    assert client.get(f"/v1/agents/{submitted}/card").status_code == 404
    approve = client.post(f"/v1/agents/{submitted}/approve", headers=bearer(other_token))
    assert approve.status_code == 403 and error_code(approve) == "not_domain_owner"
    patched = client.patch(f"/v1/agents/{submitted}", json={"status": "active"}, headers=bearer(other_token))
    assert patched.status_code == 409
    assert own.get_json() == client.get(f"/v1/agents/{submitted}", headers=bearer(other_token)).get_json()


def test_a_rejected_entry_keeps_its_reason_and_stays_unlisted(
    client: Any, submitted: str, writer_token: str, other_token: str, admin_token: str
) -> None:
    assert client.post(f"/v1/agents/{submitted}/reject", json={}, headers=bearer(writer_token)).status_code == 422
    rejected = client.post(
        f"/v1/agents/{submitted}/reject", json={"reason": "not our pilot"}, headers=bearer(writer_token)
    )
    assert rejected.get_json() == {"id": submitted, "status": "rejected", "statusMessage": "not our pilot"}
    seen = client.get(f"/v1/agents/{submitted}", headers=bearer(other_token)).get_json()
    assert (seen["status"], seen["statusMessage"]) == ("rejected", "not our pilot")
    assert not any(listed_everywhere(client, submitted).values())
    again = client.post(f"/v1/agents/{submitted}/reject", json={"reason": "twice"}, headers=bearer(writer_token))
    assert again.status_code == 409
    rejections = client.get("/v1/agents?status=rejected", headers=bearer(writer_token)).get_json()
    assert _ids(rejections) == [submitted]
    audit = client.get(f"/v1/audit?agent={submitted}", headers=bearer(admin_token)).get_json()["items"]
    assert [(e["action"], e["detail"].get("message")) for e in audit if e["action"] == "agent.reject"] == [
        ("agent.reject", "not our pilot")
    ]


def test_an_admin_approves_and_the_domain_owner_submits_without_review(
    client: Any, publisher: ArdPublisher, submitted: str, admin_token: str, writer_token: str
) -> None:
    assert client.post(f"/v1/agents/{submitted}/approve", headers=bearer(admin_token)).status_code == 200
    url = publisher.put_json("/own/card.json", card_on(publisher, "Own Agent"))
    own = client.post("/v1/agents", json={"url": url}, headers=bearer(writer_token))
    assert own.status_code == 201 and own.get_json()["status"] == "active"


def test_the_cli_approves_and_rejects(
    registry_url: str, client: Any, publisher: ArdPublisher, submitted: str, writer_token: str, other_token: str
) -> None:
    from click.testing import CliRunner

    from cli.main import cli

    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": writer_token}
    other = publisher.put_json("/other/card.json", card_on(publisher, "Other Pilot"))
    other_id = client.post("/v1/agents", json={"url": other}, headers=bearer(other_token)).get_json()["id"]
    rejected = CliRunner().invoke(cli, ["agents", "reject", other_id[:8], "--reason", "duplicate"], env=env)
    assert rejected.exit_code == 0 and rejected.output == f"{other_id} is now rejected: duplicate\n"
    approved = CliRunner().invoke(cli, ["agents", "approve", submitted, "--json"], env=env)
    assert approved.exit_code == 0 and json.loads(approved.output)["status"] == "active"
    refused = CliRunner().invoke(cli, ["agents", "approve", other_id], env={**env, "AGENTDEX_TOKEN": other_token})
    assert refused.exit_code == 1 and "not_domain_owner" in refused.output


def announced(services: Any, agent_id: str) -> list[tuple[str, str]]:
    """The change events written for the agent (none is fanned out here): (type, status)."""
    with services.engine.connect() as conn:
        rows = conn.execute(select(ChangeEvent.type, ChangeEvent.data).where(ChangeEvent.agent_id == agent_id))
        return [(kind.removeprefix(PREFIX), data["status"]) for kind, data in rows]


def test_event_followers_learn_of_an_entry_only_when_it_is_approved(
    client: Any, services: Any, publisher: ArdPublisher, submitted: str, writer_token: str, other_token: str
) -> None:
    assert announced(services, submitted) == []  # pending: nothing told
    assert client.post(f"/v1/agents/{submitted}/approve", headers=bearer(writer_token)).status_code == 200
    assert announced(services, submitted) == [("registered", "active")]

    url = publisher.put_json("/refused/card.json", card_on(publisher, "Refused Pilot"))
    refused = client.post("/v1/agents", json={"url": url}, headers=bearer(other_token)).get_json()["id"]
    reason = {"reason": "not ours"}
    assert client.post(f"/v1/agents/{refused}/reject", json=reason, headers=bearer(writer_token)).status_code == 200
    assert announced(services, refused) == []
    assert client.post(f"/v1/agents/{refused}/approve", headers=bearer(writer_token)).status_code == 200
    assert announced(services, refused) == [("registered", "active")]  # a reviewer changed their mind


def test_the_outbox_and_the_catalog_agree_on_what_is_unlisted() -> None:
    assert change_events.UNLISTED == UNLISTED
