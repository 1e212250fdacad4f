"""`agentdex keys rotate | list` against the registry's database, end to end through the command."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from cli.main import cli
from registry.container import Services


def run(services: Services, *args: str, **extra: str) -> Result:
    env = {
        "AGENTDEX_DATABASE_URL": services.settings.database_url,
        "AGENTDEX_SECRET_KEY": services.settings.secret_key,
        **extra,
    }
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_list_before_any_key_says_so(services: Services) -> None:
    result = run(services, "keys", "list")
    assert result.exit_code == 0 and "no registry keys yet" in result.output


def test_rotate_then_list(services: Services) -> None:
    first = services.registry_keys.active().kid
    rotated = run(services, "keys", "rotate")
    assert rotated.exit_code == 0 and "retired" in rotated.output and "14 days" in rotated.output
    listed = json.loads(run(services, "keys", "list", "--json").output)["items"]
    assert [(k["status"], k["alg"], k["storage"]) for k in listed] == [
        ("active", "EdDSA", "sealed"),
        ("retired", "EdDSA", "sealed"),
    ]
    assert listed[1]["kid"] == first and listed[1]["notAfter"]
    human = run(services, "keys", "list").output
    assert f"{first}  EdDSA  retired" in human and "published until" in human


def test_rotate_another_algorithm_into_a_key_file(services: Services, tmp_path: Path) -> None:
    result = run(services, "keys", "rotate", "--alg", "ES256", "--json", AGENTDEX_KEY_DIR=str(tmp_path))
    created = json.loads(result.output)
    assert created["alg"] == "ES256" and created["storage"] == f"file:{(tmp_path / created['kid']).resolve()}.pem"
    assert services.registry_keys.active("ES256").kid == created["kid"]


def test_a_bad_configuration_is_a_usage_error(services: Services) -> None:
    result = run(services, "keys", "list", AGENTDEX_ENDORSEMENT_ALG="HS256")
    assert result.exit_code == 2 and "AGENTDEX_ENDORSEMENT_ALG" in result.output


def test_the_first_rotation_retires_nothing_and_says_so(services: Services) -> None:
    first = run(services, "keys", "rotate")
    assert first.exit_code == 0, first.output
    assert "there was no EdDSA key before, none retired" in first.output and "previous" not in first.output
    created = json.loads(run(services, "keys", "rotate", "--alg", "ES256", "--json").output)
    assert created["retired"] is None
    replaced = json.loads(run(services, "keys", "rotate", "--alg", "ES256", "--json").output)
    assert replaced["retired"] == created["kid"]
    assert [k["status"] for k in json.loads(run(services, "keys", "list", "--json").output)["items"]] == [
        "active",
        "retired",
        "active",
    ]
