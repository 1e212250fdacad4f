"""Proving a domain over HTTP: the registry fetches the challenge from a real server on loopback
(a `host:port` domain, fetched over http because the tests allow http on 127.0.0.0/8)."""

from __future__ import annotations

from typing import Any

from registry.container import Services
from tests.registry.ownership.conftest import add_domain, bearer, challenge_path, verify
from tests.support.servers import CardServer


def host_of(server: CardServer) -> str:
    return server.base_url.removeprefix("http://")


def test_adding_a_domain_returns_both_challenges_and_adding_again_the_same(client: Any, writer_token: str) -> None:
    first = client.post("/v1/domains", json={"domain": "Agents.Example.COM."}, headers=bearer(writer_token))
    again = client.post("/v1/domains", json={"domain": "agents.example.com"}, headers=bearer(writer_token))

    assert first.status_code == 201 and again.status_code == 200
    entry = first.get_json()
    assert entry["domain"] == "agents.example.com" and entry["status"] == "pending"
    value = entry["challenges"]["http"]["value"]
    assert entry["challenges"]["http"]["url"].startswith("https://agents.example.com/.well-known/agentdex-challenge/")
    assert entry["challenges"]["dns"] == {
        "name": "_agentdex-challenge.agents.example.com",
        "type": "TXT",
        "value": value,
    }
    assert again.get_json()["challenges"] == entry["challenges"]


def test_domains_are_normalised_and_urls_refused(client: Any, writer_token: str) -> None:
    entry = add_domain(client, writer_token, "Bücher.Example")
    refused = client.post("/v1/domains", json={"domain": "https://x.example/path"}, headers=bearer(writer_token))

    assert entry["domain"] == "xn--bcher-kva.example"
    assert refused.status_code == 422 and refused.get_json()["error"]["code"] == "invalid_domain"


def test_serving_the_value_proves_the_domain(
    client: Any, services: Services, writer_token: str, card_server: CardServer
) -> None:
    domain = host_of(card_server)
    entry = add_domain(client, writer_token, domain)
    card_server.serve_raw(challenge_path(entry), entry["challenges"]["http"]["value"].encode() + b"\n", headers={})

    response = verify(client, writer_token, domain, "http")

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["status"] == "verified" and response.get_json()["method"] == "http"
    alice = services.tokens.authenticate(writer_token).principal_id
    assert services.domains.owner_of(domain) == alice
    assert services.domains.covers(alice, f"http://{domain}/.well-known/agent-card.json")


def test_a_wrong_value_is_refused_saying_what_was_found(
    client: Any, services: Services, writer_token: str, card_server: CardServer
) -> None:
    domain = host_of(card_server)
    entry = add_domain(client, writer_token, domain)
    card_server.serve_raw(challenge_path(entry), b"someone-elses-value", headers={})

    response = verify(client, writer_token, domain, "http")

    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "challenge_mismatch" and error["details"]["found"] == "someone-elses-value"
    assert services.domains.owner_of(domain) is None
    shown = client.get(f"/v1/domains/{domain}", headers=bearer(writer_token)).get_json()
    assert shown["status"] == "pending" and shown["reason"].startswith("challenge_mismatch")


def test_a_missing_challenge_and_a_dead_server_have_their_own_codes(
    client: Any, writer_token: str, card_server: CardServer
) -> None:
    domain = host_of(card_server)
    add_domain(client, writer_token, domain)
    missing = verify(client, writer_token, domain, "http").get_json()["error"]
    card_server.close()
    dead = verify(client, writer_token, domain, "http").get_json()["error"]

    assert missing["code"] == "challenge_not_found" and missing["details"]["status"] == 404
    assert dead["code"] == "challenge_unreachable"


def test_an_address_outside_the_allowlist_is_not_fetched(client: Any, writer_token: str) -> None:
    add_domain(client, writer_token, "10.1.2.3:8080")

    error = verify(client, writer_token, "10.1.2.3:8080", "http").get_json()["error"]

    assert error["code"] == "challenge_unreachable" and "may not be fetched" in error["message"]


def test_verify_needs_the_domain_added_first_and_a_known_method(client: Any, writer_token: str) -> None:
    unknown = verify(client, writer_token, "never-added.example", "http")
    add_domain(client, writer_token, "added.example")
    bad_method = verify(client, writer_token, "added.example", "carrier-pigeon")

    assert unknown.status_code == 404 and "agentdex domains add" in unknown.get_json()["error"]["message"]
    assert bad_method.status_code == 422


def test_the_openapi_document_describes_domains(client: Any) -> None:
    document = client.get("/openapi.json").get_json()

    assert {"post", "get"} <= set(document["paths"]["/v1/domains"])
    assert set(document["paths"]["/v1/domains/{domain}"]) == {"get", "delete"}
    verify_op = document["paths"]["/v1/domains/{domain}/verify"]["post"]
    assert verify_op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("DomainVerifyRequest")
    assert document["components"]["schemas"]["Domain"]["properties"]["status"]["enum"] == [
        "pending",
        "verified",
        "lapsed",
    ]
