"""Settings: typed, validated at start, and zero-configuration on the embedded default."""

from __future__ import annotations

import ipaddress
import os
import stat

import pytest

from registry.settings import Settings, SettingsError


def test_embedded_default_needs_no_configuration_and_keeps_its_secret(tmp_path, caplog):
    env = {"AGENTDEX_DATABASE_URL": f"sqlite:///{tmp_path}/agentdex.db"}
    first = Settings.from_env(env)
    assert first.secret_generated and len(first.secret_key) >= 32
    assert "production deployment should set AGENTDEX_SECRET_KEY" in caplog.text
    secret_file = tmp_path / "agentdex.db.secret"
    assert stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    assert Settings.from_env(env).secret_key == first.secret_key


def test_values_are_parsed_into_types():
    settings = Settings.from_env(
        {
            "AGENTDEX_DATABASE_URL": "postgresql+psycopg://u@h/db",
            "AGENTDEX_SECRET_KEY": "s" * 32,
            "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8, 10.1.0.0/16",
            "AGENTDEX_ALLOW_HTTP": "true",
            "AGENTDEX_PUBLIC_URL": "https://dex.example.com/",
            "AGENTDEX_MAX_CARD_BYTES": "1000",
        }
    )
    assert settings.allowed_networks == (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("10.1.0.0/16"))
    assert settings.allow_http is True
    assert settings.public_url == "https://dex.example.com"
    assert settings.max_card_bytes == 1000
    assert not settings.is_sqlite


@pytest.mark.parametrize(
    "env,names",
    [
        ({"AGENTDEX_ALLOWED_NETWORKS": "localhost"}, "AGENTDEX_ALLOWED_NETWORKS"),
        ({"AGENTDEX_ALLOW_HTTP": "maybe"}, "AGENTDEX_ALLOW_HTTP"),
        ({"AGENTDEX_MAX_CARD_BYTES": "-1"}, "AGENTDEX_MAX_CARD_BYTES"),
        ({"AGENTDEX_MAX_SKILLS": "many"}, "AGENTDEX_MAX_SKILLS"),
        ({"AGENTDEX_DATABASE_URL": "agentdex.db"}, "AGENTDEX_DATABASE_URL"),
        ({"AGENTDEX_DATABASE_URL": "postgresql+psycopg://u@h/db"}, "AGENTDEX_SECRET_KEY"),
        ({"AGENTDEX_SECRET_KEY": "short"}, "AGENTDEX_SECRET_KEY"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable(tmp_path, env, names):
    env = {"AGENTDEX_DATABASE_URL": f"sqlite:///{tmp_path}/x.db", **env}
    with pytest.raises(SettingsError, match=names):
        Settings.from_env(env)
