"""`agentdex tokens` for a token's owner: `create --expires --domain` at the database, and `list` and
`revoke` through a real registry on loopback with the caller's own token (an admin's sees all)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from cli.main import cli


@pytest.fixture
def local(database_url):  # type: ignore[no-untyped-def]
    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "x" * 32, "AGENTDEX_TOKEN": None}

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["tokens", *args], env=env, catch_exceptions=False)

    return run


@pytest.fixture
def remote(registry_url):  # type: ignore[no-untyped-def]
    def run(token: str, *args: str) -> Result:
        env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": token, "AGENTDEX_DATABASE_URL": None}
        return CliRunner().invoke(cli, ["tokens", *args], env=env, catch_exceptions=False)

    return run


def test_create_with_an_expiry_and_domains(local, services):
    made = local("create", "ci", "--scope", "agents:write", "--expires", "30d", "--domain", "Example.com", "--json")
    assert made.exit_code == 0, made.output
    issued = json.loads(made.output)
    assert issued["domains"] == ["example.com"] and issued["expiresAt"].endswith("Z")
    actor = services.tokens.authenticate(issued["token"])
    assert actor.domains == frozenset({"example.com"})
    listed = json.loads(local("list", "--json").output)["items"][0]
    assert listed["expiresAt"] == issued["expiresAt"] and listed["domains"] == ["example.com"]
    human = local("create", "deploy", "--scope", "relay", "--expires", "12h", "--domain", "a.example")
    assert human.exit_code == 0 and "until " in human.output and "on a.example" in human.output


@pytest.mark.parametrize("lifetime", ["30", "0d", "1y", "-3d", "soon"])
def test_create_refuses_a_lifetime_it_cannot_read(local, services, lifetime):
    refused = local("create", "ci", "--scope", "relay", "--expires", lifetime)
    assert refused.exit_code == 2 and "such as 30d" in refused.output
    assert services.tokens.listed() == []


def test_create_refuses_a_url_for_a_domain(local, services):
    refused = local("create", "ci", "--scope", "relay", "--domain", "https://example.com")
    assert refused.exit_code == 2 and "is not a domain" in refused.output


def test_an_owner_lists_its_own_tokens_through_the_api(remote, services, writer_token, other_token, admin_token):
    services.tokens.create("alice-ci", ["relay"], principal="alice", domains=["example.com"])
    listed = remote(writer_token, "list")
    assert listed.exit_code == 0, listed.output
    header, *rows = listed.output.splitlines()
    assert header.split()[:6] == ["ID", "NAME", "PRINCIPAL", "SCOPES", "DOMAINS", "TOKEN"]
    assert [row.split()[1:5] for row in rows] == [
        ["alice", "alice", "agents:write", "any"],
        ["alice-ci", "alice", "relay", "example.com"],
    ]
    everyone = json.loads(remote(admin_token, "list", "--json").output)["items"]
    assert [i["name"] for i in everyone] == ["alice", "bob", "root", "alice-ci"]


def test_an_owner_revokes_its_own_token_by_name_and_not_anothers(remote, services, writer_token, other_token):
    spare = services.tokens.create("alice-spare", ["relay"], principal="alice")
    spare_id = str(services.tokens.find("alice-spare").id)
    revoked = remote(writer_token, "revoke", "alice-spare")
    assert revoked.exit_code == 0, revoked.output
    assert revoked.output.startswith("revoked token") and "refuses it from the next request" in revoked.output
    assert services.tokens.find(spare_id).revoked_at is not None
    assert "was already revoked at" in remote(writer_token, "revoke", spare_id).output
    refused = remote(spare.token, "list")
    assert refused.exit_code == 1 and "token_revoked" in refused.output

    bobs = remote(writer_token, "revoke", "bob")  # bob's token is not among alice's
    assert bobs.exit_code == 1 and "no token named 'bob'" in bobs.output
    by_id = remote(writer_token, "revoke", str(services.tokens.find("bob").id), "--json")
    assert by_id.exit_code == 1 and json.loads(by_id.stdout)["error"]["code"] == "not_found"
    assert services.tokens.find("bob").revoked_at is None


def test_without_a_token_the_operator_works_at_the_database(local, services, writer_token, other_token):
    assert [i["name"] for i in json.loads(local("list", "--json").output)["items"]] == ["alice", "bob"]
    assert local("revoke", "bob").exit_code == 0
    assert [i["name"] for i in json.loads(local("list", "--json").output)["items"]] == ["alice"]
