"""`agentdex domains add|verify|list|remove` against a real registry on loopback, proving a domain
served by a real HTTP server on loopback."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from cli.main import cli
from registry.container import Services
from tests.support.servers import CardServer


def run(*args: str, url: str, token: str) -> Any:
    env = {"AGENTDEX_URL": url, "AGENTDEX_TOKEN": token}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_add_verify_list_and_remove(
    services: Services, registry_url: str, writer_token: str, card_server: CardServer
) -> None:
    domain = card_server.base_url.removeprefix("http://")
    added = run("domains", "add", domain, url=registry_url, token=writer_token)
    entry = json.loads(run("domains", "add", domain, "--json", url=registry_url, token=writer_token).output)
    http = entry["challenges"]["http"]

    refused = run("domains", "verify", domain, "--method", "http", url=registry_url, token=writer_token)
    card_server.serve_raw(http["url"].removeprefix(card_server.base_url), http["value"].encode(), headers={})
    proven = run("domains", "verify", domain, "--method", "http", url=registry_url, token=writer_token)
    listed = run("domains", "list", url=registry_url, token=writer_token)
    removed = run("domains", "remove", domain, url=registry_url, token=writer_token)

    assert added.exit_code == 0 and http["url"] in added.output and http["value"] in added.output
    assert entry["challenges"]["dns"] is None and "TXT" not in added.output  # an IP address has no DNS proof
    assert refused.exit_code == 1 and "challenge_not_found" in refused.output and "HTTP 404" in refused.output
    assert proven.exit_code == 0 and f"{domain}: verified by http" in proven.output
    assert domain in listed.output and "verified by http" in listed.output and "alice" in listed.output
    assert removed.exit_code == 0 and services.domains.owner_of(domain) is None


def test_a_wrong_value_fails_with_what_was_found(registry_url: str, writer_token: str, card_server: CardServer) -> None:
    domain = card_server.base_url.removeprefix("http://")
    entry = json.loads(run("domains", "add", domain, "--json", url=registry_url, token=writer_token).output)
    path = entry["challenges"]["http"]["url"].removeprefix(card_server.base_url)
    card_server.serve_raw(path, b"stale-value", headers={})

    result = run("domains", "verify", domain, "--method", "http", "--json", url=registry_url, token=writer_token)

    assert result.exit_code == 1
    assert "stale-value" in result.output and "challenge_mismatch" in result.output


def test_add_prints_the_txt_record_for_a_name(registry_url: str, writer_token: str) -> None:
    added = run("domains", "add", "agents.example.com", "--include-subdomains", url=registry_url, token=writer_token)

    assert added.exit_code == 0
    assert "TXT record  _agentdex-challenge.agents.example.com" in added.output
    assert "https://agents.example.com/.well-known/agentdex-challenge/" in added.output
