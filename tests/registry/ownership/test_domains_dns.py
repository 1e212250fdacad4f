"""Proving a domain with a DNS TXT record, asked of a real DNS server on loopback; what the proof
covers (subdomains only when asked and proven by DNS at the parent); who holds a domain when two
accounts prove it; listing and removing."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from registry.audit import AuditEntry
from registry.container import Services
from tests.registry.ownership.conftest import add_domain, bearer, challenge_path, verify
from tests.support.dns_server import LoopbackDns
from tests.support.servers import CardServer


def prove_by_dns(client: Any, dns: LoopbackDns, token: str, domain: str, **body: Any) -> dict[str, Any]:
    entry = add_domain(client, token, domain, **body)
    dns.set_txt(entry["challenges"]["dns"]["name"], "v=unrelated", entry["challenges"]["dns"]["value"])
    response = verify(client, token, domain, "dns")
    assert response.status_code == 200, response.get_json()
    proven: dict[str, Any] = response.get_json()
    return proven


def principal(services: Services, token: str) -> int:
    return services.tokens.authenticate(token).principal_id


def test_a_txt_record_with_the_value_proves_the_domain(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str
) -> None:
    proven = prove_by_dns(client, dns_server, writer_token, "agents.example.com")

    assert proven["status"] == "verified" and proven["method"] == "dns"
    assert "_agentdex-challenge.agents.example.com" in dns_server.zone.questions
    assert services.domains.covers(principal(services, writer_token), "https://agents.example.com/card.json")


def test_a_wrong_or_missing_record_is_refused(client: Any, dns_server: LoopbackDns, writer_token: str) -> None:
    entry = add_domain(client, writer_token, "agents.example.com")
    missing = verify(client, writer_token, "agents.example.com", "dns").get_json()["error"]
    dns_server.set_txt(entry["challenges"]["dns"]["name"], "not-the-value")
    wrong = verify(client, writer_token, "agents.example.com", "dns").get_json()["error"]

    assert (
        missing["code"] == "challenge_not_found" and missing["details"]["record"] == entry["challenges"]["dns"]["name"]
    )
    assert wrong["code"] == "challenge_mismatch" and wrong["details"]["found"] == ["not-the-value"]


def test_subdomains_are_covered_only_when_asked(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str, other_token: str
) -> None:
    prove_by_dns(client, dns_server, writer_token, "wide.example", includeSubdomains=True)
    prove_by_dns(client, dns_server, other_token, "narrow.example")
    alice, bob = principal(services, writer_token), principal(services, other_token)

    assert services.domains.covers(alice, "https://a.b.wide.example/card.json")
    assert services.domains.owner_of("deep.narrow.example") is None
    assert services.domains.covers(bob, "narrow.example") and not services.domains.covers(bob, "x.narrow.example")


def test_subdomains_need_the_dns_proof_of_the_parent(
    client: Any, services: Services, writer_token: str, card_server: CardServer
) -> None:
    # A web server answering for a name does not speak for the names under it (as ACME wildcards).
    port = card_server.base_url.rsplit(":", 1)[1]
    domain = f"localhost:{port}"
    entry = add_domain(client, writer_token, domain, includeSubdomains=True)
    card_server.serve_raw(challenge_path(entry), entry["challenges"]["http"]["value"].encode(), headers={})

    proven = verify(client, writer_token, domain, "http").get_json()

    assert proven["status"] == "verified" and proven["includeSubdomains"] and not proven["subdomainsCovered"]
    assert services.domains.owner_of(domain) == principal(services, writer_token)
    assert services.domains.owner_of(f"agent.localhost:{port}") is None


def test_a_nearer_proof_wins_over_a_parent_with_subdomains(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str, other_token: str
) -> None:
    prove_by_dns(client, dns_server, writer_token, "example.org", includeSubdomains=True)
    prove_by_dns(client, dns_server, other_token, "api.example.org")

    assert services.domains.owner_of("api.example.org") == principal(services, other_token)
    assert services.domains.owner_of("www.example.org") == principal(services, writer_token)


def test_a_fresh_proof_by_another_account_takes_the_domain_over(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str, other_token: str
) -> None:
    prove_by_dns(client, dns_server, writer_token, "sold.example")
    prove_by_dns(client, dns_server, other_token, "sold.example")

    assert services.domains.owner_of("sold.example") == principal(services, other_token)
    former = client.get("/v1/domains/sold.example", headers=bearer(writer_token)).get_json()
    assert former["status"] == "lapsed" and "taken over" in former["reason"] and "'bob'" in former["reason"]
    with services.sessions() as session:
        actions = session.execute(select(AuditEntry.action, AuditEntry.detail).order_by(AuditEntry.id)).all()
    lapse = [detail for action, detail in actions if action == "domain.lapse"]
    taken = [detail for action, detail in actions if action == "domain.verify" and "previousOwner" in detail]
    assert lapse == [{"domain": "sold.example", "owner": "alice", "reason": former["reason"]}]
    assert taken[0]["previousOwner"] == "alice"


def test_owners_list_their_own_an_admin_everyones_and_removing_releases(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str, other_token: str, admin_token: str
) -> None:
    prove_by_dns(client, dns_server, writer_token, "alice.example")
    add_domain(client, other_token, "bob.example")

    mine = client.get("/v1/domains", headers=bearer(writer_token)).get_json()["items"]
    everyone = client.get("/v1/domains", headers=bearer(admin_token)).get_json()["items"]
    hidden = client.get("/v1/domains/alice.example", headers=bearer(other_token))
    removed = client.delete("/v1/domains/alice.example", headers=bearer(writer_token))

    assert [entry["domain"] for entry in mine] == ["alice.example"]
    assert {(entry["domain"], entry["owner"]) for entry in everyone} == {
        ("alice.example", "alice"),
        ("bob.example", "bob"),
    }
    assert hidden.status_code == 404
    assert removed.status_code == 204 and services.domains.owner_of("alice.example") is None
    assert client.get("/v1/domains/alice.example", headers=bearer(writer_token)).status_code == 404


def test_domains_need_a_token(client: Any) -> None:
    assert client.get("/v1/domains").status_code == 401
    assert client.post("/v1/domains", json={"domain": "x.example"}).status_code == 401
