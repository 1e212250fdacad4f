"""Registering a domain registers every A2A agent its ARD manifest lists (issue 30, "Crawl
manifests"): inline and by URL, nested catalogs included, each validated like any card; broken
entries and squatted identifiers are refused with their rule; provenance is kept and shown."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from registry.schema import Agent, AgentCard
from tests.support.ard_publishers import MISMATCHED_IDENTITY, ArdPublisher, serving, standard_manifest
from tests.support.cards import make_card


@pytest.fixture
def publisher() -> Iterator[ArdPublisher]:
    yield from serving()


def register(client, auth, url: str):  # type: ignore[no-untyped-def]
    return client.post("/v1/agents", json={"url": url}, headers=auth)


def agents_by_name(client) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    page = client.get("/v1/agents", query_string={"status": "any", "limit": 200}).json
    return {agent["name"]: agent for agent in page["items"]}


def test_a_domain_with_a_manifest_registers_every_agent_it_lists(client, auth, publisher):
    publisher.publish(standard_manifest(publisher))
    response = register(client, auth, publisher.domain)
    assert response.status_code == 201, response.json
    report = response.json["manifest"]
    assert report["url"] == publisher.url("/.well-known/ard.json") and report["foundVia"] == "well-known"
    names = {"Alpha", "Beta", "Epsilon", "Zeta", "Gamma", "Delta"}
    assert {agents_by_name(client)[n]["name"] for n in names} == names
    assert len(report["registered"]) == 6 and report["listed"] == 8  # with the broken and the squatter
    assert (report["ignored"], report["catalogs"], report["complete"]) == (1, 1, True)
    refused = {r["identifier"]: r["rule"] for r in report["refused"]}
    assert refused == {
        publisher.urn("broken"): "ard.url-and-data",
        publisher.urn("squatter"): "ard.trust-identity-mismatch",
    }
    squatter = next(r for r in report["refused"] if r["rule"] == "ard.trust-identity-mismatch")
    assert "squatter.example" in squatter["message"] and "127.0.0.1" in squatter["message"]
    assert "Squatter" not in agents_by_name(client) and "Broken" not in agents_by_name(client)


def test_inline_cards_are_kept_at_the_manifest_url_and_identifier_cards_by_url_at_theirs(client, auth, publisher):
    publisher.publish(standard_manifest(publisher))
    register(client, auth, publisher.domain)
    agents = agents_by_name(client)
    manifest = publisher.url("/.well-known/ard.json")
    assert agents["Epsilon"]["cardUrl"] == f"{manifest}#{publisher.urn('epsilon')}"
    assert agents["Epsilon"]["source"] == "pushed"  # from the manifest: no card re-crawl fetches it
    assert agents["Delta"]["cardUrl"] == f"{manifest}#{publisher.urn('delta')}"  # nested, inline
    assert agents["Alpha"]["cardUrl"] == publisher.url("/agents/alpha.json")
    assert agents["Alpha"]["source"] == "crawled"
    assert agents["Gamma"]["cardUrl"] == publisher.url("/agents/gamma.json")  # nested, by URL
    card = client.get(f"/v1/agents/{agents['Zeta']['id']}/card").json
    assert card == make_card("Zeta", tags=["zeta"])  # the `mediaType` (v0.9) shape is read too


def test_provenance_names_the_manifest_the_catalog_and_the_identifier(client, auth, publisher, services):
    publisher.publish(standard_manifest(publisher))
    register(client, auth, publisher.domain)
    agents = agents_by_name(client)
    (gamma,) = client.get(f"/v1/agents/{agents['Gamma']['id']}/listings").json["items"]
    assert gamma["domain"] == publisher.domain
    assert gamma["manifestUrl"] == publisher.url("/.well-known/ard.json")
    assert gamma["catalogUrl"] == publisher.url("/catalogs/team.json")
    assert gamma["identifier"] == publisher.urn("gamma")
    assert gamma["listed"] and gamma["registeredByCrawl"] and gamma["delistedAt"] is None
    assert client.get("/v1/agents/00000000-0000-0000-0000-000000000000/listings").status_code == 404
    with services.engine.connect() as conn:  # the crawl's cards go through the catalog: validated, versioned
        fetched = conn.execute(
            select(AgentCard.fetched_from).join(Agent, Agent.pk == AgentCard.agent_pk).where(Agent.name == "Delta")
        ).scalar_one()
    assert fetched == publisher.url("/catalogs/team.json")


def test_an_invalid_card_is_refused_with_its_issues_and_the_others_are_registered(client, auth, publisher):
    bad = make_card("Bad")
    del bad["version"]
    publisher.publish([publisher.inline("bad", card=bad), publisher.by_url("good")])
    response = register(client, auth, publisher.domain)
    assert response.status_code == 201, response.json
    (refused,) = response.json["manifest"]["refused"]
    assert refused["identifier"] == publisher.urn("bad") and refused["rule"] == "ard.card-invalid"
    assert "version" in refused["message"]
    assert set(agents_by_name(client)) == {"Good"}


def test_a_domain_with_only_an_agent_card_registers_as_before(client, auth, publisher, card):
    publisher.put_json("/.well-known/agent-card.json", card)
    response = register(client, auth, publisher.domain)
    assert response.status_code == 201, response.json
    assert "manifest" not in response.json and "domainCard" not in response.json
    assert response.json["cardUrl"] == publisher.url("/.well-known/agent-card.json")
    assert response.headers["Location"].endswith(response.json["id"])


def test_a_domain_with_neither_card_nor_manifest_fails_as_before(client, auth, publisher):
    response = register(client, auth, publisher.domain)
    assert response.status_code == 502, response.json
    assert response.json["error"]["details"]["reason"] == "CardNotFound"


def test_a_domain_with_a_card_and_a_manifest_answers_its_agent_and_the_manifest(client, auth, publisher, card):
    publisher.put_json("/.well-known/agent-card.json", card)
    publisher.publish([publisher.by_url("alpha")])
    response = register(client, auth, publisher.domain)
    assert response.status_code == 201, response.json
    assert response.json["name"] == "Weather Agent" and response.headers["Location"].endswith(response.json["id"])
    assert [r["identifier"] for r in response.json["manifest"]["registered"]] == [publisher.urn("alpha")]


def test_registering_a_domain_again_crawls_it_and_says_nothing_was_created(client, auth, publisher, card):
    publisher.put_json("/.well-known/agent-card.json", card)
    publisher.publish([publisher.by_url("alpha")])
    first = register(client, auth, publisher.domain)
    again = register(client, auth, publisher.domain)
    assert again.status_code == 200, again.json
    assert again.json["domainCard"]["outcome"] == "already-registered"
    assert again.json["domainCard"]["id"] == first.json["id"]
    assert again.json["manifest"]["registered"] == [] and again.json["manifest"]["unchanged"] == 1


def test_an_agent_registered_directly_is_linked_not_taken(client, auth, other_token, publisher):
    mine = client.post("/v1/agents", json={"url": publisher.by_url("alpha")["url"]}, headers=auth)
    publisher.publish([publisher.by_url("alpha"), publisher.by_url("beta")])
    response = register(client, {"Authorization": f"Bearer {other_token}"}, publisher.domain)
    manifest = response.json["manifest"]
    assert manifest["linked"] == [{"identifier": publisher.urn("alpha"), "id": mine.json["id"]}]
    assert [r["identifier"] for r in manifest["registered"]] == [publisher.urn("beta")]
    (listing,) = client.get(f"/v1/agents/{mine.json['id']}/listings").json["items"]
    assert listing["registeredByCrawl"] is False


def test_another_principal_cannot_take_over_a_registered_domain(client, auth, other_token, publisher):
    publisher.publish([publisher.by_url("alpha")])
    assert register(client, auth, publisher.domain).status_code == 201
    response = register(client, {"Authorization": f"Bearer {other_token}"}, publisher.domain)
    assert response.status_code == 409, response.json


def test_the_manifest_url_itself_registers_the_domain(client, auth, publisher):
    url = publisher.publish([publisher.by_url("alpha")], path="/.well-known/ai-catalog.json")
    response = register(client, auth, url)
    assert response.status_code == 201, response.json
    assert response.json["manifest"]["foundVia"] == "well-known-legacy"
    assert response.json["domainCard"]["outcome"] == "not-registered"


def test_the_squatter_rule_accepts_the_publishers_own_trust_domains(client, auth, publisher):
    identities = ["did:web:127.0.0.1%3A8443", "https://127.0.0.1/keys", publisher.urn("one"), MISMATCHED_IDENTITY]
    entries = [
        publisher.inline(f"n{i}", card=make_card(f"N{i}"), trustManifest={"identity": identity})
        for i, identity in enumerate(identities)
    ]
    publisher.publish(entries)
    report = register(client, auth, publisher.domain).json["manifest"]
    assert len(report["registered"]) == 3
    assert [r["identifier"] for r in report["refused"]] == [publisher.urn("n3")]


def test_the_cli_reports_what_the_manifest_listed_registered_and_refused(registry_url, writer_token, publisher):
    from click.testing import CliRunner

    from cli.main import cli

    publisher.publish(standard_manifest(publisher))
    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": writer_token}
    human = CliRunner().invoke(cli, ["register", publisher.domain], env=env, catch_exceptions=False)
    assert human.exit_code == 0, human.output
    assert f"ARD manifest {publisher.url('/.well-known/ard.json')}" in human.output
    assert "listed 8 A2A agent(s), 1 nested catalog(s); 1 other entries ignored" in human.output
    assert "registered 6" in human.output and "refused 2" in human.output
    assert "ard.trust-identity-mismatch" in human.output and publisher.urn("squatter") in human.output
    assert publisher.urn("gamma") in human.output
    again = CliRunner().invoke(cli, ["register", publisher.domain, "--json"], env=env, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    body = json.loads(again.output)
    assert body["manifest"]["unchanged"] == 6 and body["manifest"]["registered"] == []
    assert body["domainCard"]["outcome"] == "not-registered"
