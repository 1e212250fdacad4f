"""`agentdex tokens list|revoke` on the registry's database, as an operator runs them, and what a
revoked token then gets from a real registry on loopback."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner, Result

from cli.main import cli


@pytest.fixture
def local(database_url):  # type: ignore[no-untyped-def]
    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "x" * 32}

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["tokens", *args], env=env, catch_exceptions=False)

    return run


def test_list_shows_tokens_but_never_their_secrets(local, services, writer_token, admin_token):
    listed = local("list")
    assert listed.exit_code == 0, listed.output
    header, *rows = listed.output.splitlines()
    assert header.split() == [
        "ID",
        "NAME",
        "PRINCIPAL",
        "SCOPES",
        "DOMAINS",
        "TOKEN",
        "CREATED",
        "USED",
        "EXPIRES",
        "REVOKED",
    ]
    assert [row.split()[1] for row in rows] == ["alice", "root"]
    assert f"{writer_token[:10]}…" in rows[0] and writer_token not in listed.output
    items = json.loads(local("list", "--json").output)["items"]
    assert [(i["name"], i["scopes"], i["revokedAt"]) for i in items] == [
        ("alice", ["agents:write"], None),
        ("root", ["admin"], None),
    ]
    assert not re.search(r"[0-9a-f]{64}", listed.output + json.dumps(items))  # no hashes either


def test_revoke_by_name_then_the_registry_refuses_the_token(local, services, registry_url, writer_token):
    revoked = local("revoke", "alice")
    assert revoked.exit_code == 0, revoked.output
    assert revoked.output.startswith("revoked token") and "(alice, alice)" in revoked.output

    register = CliRunner().invoke(
        cli, ["register", "https://a.example"], env={"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": writer_token}
    )
    assert register.exit_code == 1
    assert "revoked" in register.output and "HTTP 401, token_revoked" in register.output

    assert [i["name"] for i in json.loads(local("list", "--json").output)["items"]] == []
    everything = json.loads(local("list", "--all", "--json").output)["items"]
    assert everything[0]["name"] == "alice" and everything[0]["revokedAt"]

    again = json.loads(local("revoke", str(everything[0]["id"]), "--json").output)
    assert again["revokedNow"] is False and again["revokedAt"] == everything[0]["revokedAt"]
    assert "was already revoked at" in local("revoke", str(everything[0]["id"])).output


def test_revoke_refuses_a_name_it_cannot_pin_down(local, services):
    services.tokens.create("deploy", ["relay"])
    services.tokens.create("deploy", ["relay"])
    shared = local("revoke", "deploy")
    assert shared.exit_code == 1 and "2 tokens are named 'deploy'" in shared.output and "give the id" in shared.output
    unknown = local("revoke", "nobody")
    assert unknown.exit_code == 1 and "no token named 'nobody'" in unknown.output
    assert json.loads(local("list", "--json").output)["items"][0]["revokedAt"] is None  # nothing revoked
