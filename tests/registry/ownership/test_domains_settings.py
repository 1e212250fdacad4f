"""AGENTDEX_OWNERSHIP and the domain proofs' settings: parsed once, refused with the variable named."""

from __future__ import annotations

import pytest

from registry.settings import Settings
from registry.settings_env import SettingsError


def test_the_default_is_open_and_the_system_resolver() -> None:
    ownership = Settings.from_env({}).ownership

    assert ownership.policy == "open" and ownership.dns_nameservers == ()
    assert ownership.recheck_interval == 86_400 and ownership.recheck_failures_before_lapse == 3


def test_values_are_parsed() -> None:
    env = {
        "AGENTDEX_OWNERSHIP": "Verified",
        "AGENTDEX_DNS_NAMESERVERS": "127.0.0.1:5353, 9.9.9.9, [::1]:53",
        "AGENTDEX_DOMAIN_RECHECK_INTERVAL": "3600",
        "AGENTDEX_DOMAIN_RECHECK_FAILURES": "5",
    }
    ownership = Settings.from_env(env).ownership

    assert ownership.policy == "verified"
    assert ownership.dns_nameservers == (("127.0.0.1", 5353), ("9.9.9.9", 53), ("::1", 53))
    assert ownership.recheck_interval == 3600 and ownership.recheck_failures_before_lapse == 5


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENTDEX_OWNERSHIP", "strict"),
        ("AGENTDEX_DNS_NAMESERVERS", "dns.example:53"),
        ("AGENTDEX_DNS_NAMESERVERS", "127.0.0.1:99999"),
        ("AGENTDEX_DOMAIN_RECHECK_INTERVAL", "0"),
        ("AGENTDEX_DOMAIN_RECHECK_FAILURES", "0"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})
