"""`agentdex audit` against a real registry on loopback: a person's table, a pipeline's JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import cli
from tests.support.cards import make_card


def run(*args: str, url: str, token: str | None = None):  # type: ignore[no-untyped-def]
    env = {"AGENTDEX_URL": url, **({"AGENTDEX_TOKEN": token} if token else {})}
    return CliRunner().invoke(cli, ["audit", *args], env=env, catch_exceptions=False)


def _register_and_delete(client, auth) -> str:  # type: ignore[no-untyped-def]
    card = make_card("Audited", url="https://audited.example.com/a2a")
    body = {"card": card, "cardUrl": "https://audited.example.com/.well-known/agent-card.json"}
    agent_id = str(client.post("/v1/agents", json=body, headers=auth).json["id"])
    assert client.delete(f"/v1/agents/{agent_id}", headers=auth).status_code == 204
    return agent_id


def test_audit_prints_who_did_what_to_which_agent(client, auth, admin_token, registry_url):  # type: ignore[no-untyped-def]
    agent_id = _register_and_delete(client, auth)
    result = run(url=registry_url, token=admin_token)
    assert result.exit_code == 0, result.output
    header, registered, deleted = result.output.splitlines()
    assert header.split()[:6] == ["ID", "TIME", "(UTC)", "ACTOR", "ACTION", "AGENT"]
    assert registered.split()[3:6] == ["alice", "agent.register", agent_id]
    assert deleted.split()[3:6] == ["alice", "agent.delete", agent_id]
    assert '"name": "Audited"' in deleted


def test_audit_pages_filters_and_json(client, auth, admin_token, registry_url):  # type: ignore[no-untyped-def]
    agent_id = _register_and_delete(client, auth)
    first = run("--limit", "1", url=registry_url, token=admin_token)
    assert "agent.register" in first.output
    cursor = first.output.splitlines()[-1].removeprefix("more: --cursor ")
    second = run("--limit", "1", "--cursor", cursor, "--json", url=registry_url, token=admin_token)
    page = json.loads(second.output)
    assert [(e["action"], e["agentId"]) for e in page["items"]] == [("agent.delete", agent_id)]
    assert page["nextCursor"] is None
    recent = run(
        "--since",
        "1h",
        "--action",
        "agent.delete",
        "--agent",
        agent_id[:8],
        "--json",
        url=registry_url,
        token=admin_token,
    )
    assert [e["action"] for e in json.loads(recent.output)["items"]] == ["agent.delete"]
    assert json.loads(run("--since", "1h", "--actor", "bob", "--json", url=registry_url, token=admin_token).output) == {
        "items": [],
        "nextCursor": None,
    }


def test_audit_refuses_a_bad_age_and_a_missing_token(admin_token, registry_url):  # type: ignore[no-untyped-def]
    bad = run("--since", "yesterday", url=registry_url, token=admin_token)
    assert bad.exit_code == 2
    assert "--since 'yesterday'" in bad.output
    refused = run(url=registry_url)
    assert refused.exit_code == 1


def test_a_token_that_is_not_an_admins_shows_the_entries_about_its_principal(client, auth, other_token, registry_url):  # type: ignore[no-untyped-def]
    agent_id = _register_and_delete(client, auth)
    alices = json.loads(run("--json", url=registry_url, token=auth["Authorization"].removeprefix("Bearer ")).output)
    assert [(e["action"], e["agentId"]) for e in alices["items"]] == [
        ("agent.register", agent_id),
        ("agent.delete", agent_id),
    ]
    assert json.loads(run("--json", url=registry_url, token=other_token).output)["items"] == []
