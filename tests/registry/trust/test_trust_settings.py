"""Trust settings: typed, validated at start, with messages that name the variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.settings import Settings, SettingsError
from signing import generate_key, public_jwks

BASE = {"AGENTDEX_DATABASE_URL": "postgresql+psycopg://db/x", "AGENTDEX_SECRET_KEY": "s" * 20}


def test_defaults() -> None:
    trust = Settings.from_env(BASE).trust
    assert (trust.require_signatures, trust.trusted_jwks, trust.jku_origins, trust.endorsement_alg) == (
        False,
        None,
        (),
        "EdDSA",
    )
    assert (trust.jwks_ttl, trust.jwks_min_refresh, trust.key_grace) == (300.0, 60.0, 14 * 86_400.0)


def test_values_from_the_environment(tmp_path: Path) -> None:
    jwks = tmp_path / "trusted.json"
    jwks.write_text(json.dumps(public_jwks([generate_key("ES256")])))
    trust = Settings.from_env(
        {
            **BASE,
            "AGENTDEX_REQUIRE_SIGNATURES": "true",
            "AGENTDEX_TRUSTED_JWKS": str(jwks),
            "AGENTDEX_JKU_ALLOWED_ORIGINS": "https://Keys.Example.com, https://b.example:8443/",
            "AGENTDEX_KEY_DIR": str(tmp_path / "keys"),
            "AGENTDEX_KEY_GRACE_PERIOD": "3600",
        }
    ).trust
    assert trust.require_signatures and trust.trusted_jwks == jwks.read_text()
    assert trust.jku_origins == ("https://keys.example.com", "https://b.example:8443")
    assert trust.key_dir == tmp_path / "keys" and trust.key_grace == 3600.0


@pytest.mark.parametrize(
    "name,value,needle",
    [
        ("AGENTDEX_JKU_ALLOWED_ORIGINS", "https://keys.example.com/path", "not an https origin"),
        ("AGENTDEX_JKU_ALLOWED_ORIGINS", "http://keys.example.com", "not an https origin"),
        ("AGENTDEX_TRUSTED_JWKS", '{"no": "keys"}', "not a usable JWKS"),
        ("AGENTDEX_TRUSTED_JWKS", "/nonexistent/jwks.json", "cannot read"),
        ("AGENTDEX_ENDORSEMENT_ALG", "HS256", "must be one of"),
        ("AGENTDEX_REQUIRE_SIGNATURES", "maybe", "not a boolean"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str, needle: str) -> None:
    with pytest.raises(SettingsError, match=needle) as raised:
        Settings.from_env({**BASE, name: value})
    assert name in str(raised.value)


def test_http_origins_only_where_plain_http_is_allowed() -> None:
    env = {**BASE, "AGENTDEX_ALLOW_HTTP": "true", "AGENTDEX_JKU_ALLOWED_ORIGINS": "http://127.0.0.1:8000"}
    assert Settings.from_env(env).trust.jku_origins == ("http://127.0.0.1:8000",)
