"""`agentdex card publish`: a signed card handed to a live registry on loopback, the registry's
verdict read back and held against the one reached with the pipeline's own keys; the agent's
JWKS is served by a real loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from signing import SigningKey, generate_key, public_jwks, sign_card
from tests.support.cards import make_card
from tests.support.servers import CardServer

CARD_URL = "https://weather.example.com/.well-known/agent-card.json"


@pytest.fixture
def key() -> SigningKey:
    return generate_key("EdDSA")


@pytest.fixture
def files(tmp_path: Path, key: SigningKey) -> Path:
    (tmp_path / "signed.json").write_text(json.dumps(sign_card(make_card("Weather"), key)), encoding="utf-8")
    (tmp_path / "jwks.json").write_text(json.dumps(public_jwks([key])), encoding="utf-8")
    return tmp_path


def publish(files: Path, registry_url: str, token: str, *args: str) -> Result:
    command = ["card", "publish", str(files / "signed.json"), "--jwks", str(files / "jwks.json"), *args]
    env = {"AGENTDEX_URL": registry_url, "AGENTDEX_TOKEN": token}
    return CliRunner().invoke(cli, command, env=env, catch_exceptions=False)


def test_publish_registers_then_replaces_and_the_registry_agrees(
    files: Path, key: SigningKey, registry_url: str, writer_token: str, card_server: CardServer
) -> None:
    jwks_url = card_server.serve_json("/jwks.json", public_jwks([key]))
    first = publish(files, registry_url, writer_token, "--url", CARD_URL, "--jwks-url", jwks_url, "--json")
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    assert result["action"] == "registered" and result["agent"]["signature"]["state"] == "verified"
    assert result["signatures"] == [{"index": 0, "kid": key.kid, "here": "valid", "registry": "valid", "agrees": True}]

    again = publish(files, registry_url, writer_token, "--url", CARD_URL)  # the URL is taken: replace
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(f"unchanged: Weather ({result['agent']['id']}) card version 1")
    assert f"#0 kid={key.kid}  here valid, registry valid  agrees" in again.stdout

    (files / "signed.json").write_text(json.dumps(sign_card(make_card("Weather v2"), key)), encoding="utf-8")
    replaced = publish(files, registry_url, writer_token, "--agent", result["agent"]["id"][:8])
    assert replaced.exit_code == 0, replaced.output
    assert replaced.stdout.startswith(f"replaced: Weather v2 ({result['agent']['id']}) card version 2")


def test_a_jwks_url_that_publishes_another_key_fails_naming_the_kid(
    files: Path, key: SigningKey, registry_url: str, writer_token: str, card_server: CardServer
) -> None:
    jwks_url = card_server.serve_json("/jwks.json", public_jwks([generate_key("EdDSA")]))
    result = publish(files, registry_url, writer_token, "--url", CARD_URL, "--jwks-url", jwks_url)
    assert result.exit_code == 3
    assert f"#0 kid={key.kid}  here valid, registry key_not_found  DISAGREES" in result.stdout
    assert f"signature #0 (kid {key.kid}): the registry could not resolve kid {key.kid}" in result.stderr
    assert f"the JWKS at {jwks_url} does not publish it" in result.stderr


def test_a_card_that_does_not_verify_here_is_not_published(
    files: Path, registry_url: str, writer_token: str, client
) -> None:  # type: ignore[no-untyped-def]
    (files / "jwks.json").write_text(json.dumps(public_jwks([generate_key("EdDSA")])), encoding="utf-8")
    result = publish(files, registry_url, writer_token, "--url", CARD_URL)
    assert result.exit_code == 3 and "does not verify here, so it was not published" in result.stderr
    assert client.get("/v1/agents").json["items"] == []


def test_agent_or_url_is_required(files: Path, registry_url: str, writer_token: str) -> None:
    neither = publish(files, registry_url, writer_token)
    both = publish(files, registry_url, writer_token, "--agent", "5b0c1d2e", "--url", CARD_URL)
    assert neither.exit_code == both.exit_code == 2 and "either --agent ID or --url CARD_URL" in both.stderr
