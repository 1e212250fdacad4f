"""Settings for who may speak for an agent (issue 33): the ownership policy, domain proofs and
their re-checks. O2 and O3 add their fields here."""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping

from registry.settings_env import SettingsError, env_float, env_int

POLICIES = ("open", "verified", "review")


@dataclasses.dataclass(frozen=True)
class OwnershipSettings:
    """`policy`: `open` (whoever registers an agent owns it), `verified` (only the proven owner of
    the card's domain, or an admin) or `review` (anyone submits; the domain's owner or an admin
    approves). `dns_nameservers`: `address:port` (or an address alone, port 53) of the resolvers the DNS proof
    asks; empty: the system's resolver."""

    policy: str = "open"
    dns_nameservers: tuple[tuple[str, int], ...] = ()
    dns_timeout: float = 5.0  # the whole lookup, every nameserver included
    http_timeout: float = 10.0  # fetching the HTTP challenge
    recheck_interval: float = 24 * 3600.0  # seconds between re-checks of a proven domain
    # A proof that fails this many re-checks in a row lapses: one DNS hiccup or a deploy does not
    # take a domain away, a removed record does within a few intervals.
    recheck_failures_before_lapse: int = 3
    recheck_batch: int = 50

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise SettingsError(f"AGENTDEX_OWNERSHIP={self.policy!r} is not one of {', '.join(POLICIES)}")
        if self.recheck_interval <= 0:
            raise SettingsError("AGENTDEX_DOMAIN_RECHECK_INTERVAL must be positive (seconds)")
        if self.recheck_failures_before_lapse < 1:
            raise SettingsError("AGENTDEX_DOMAIN_RECHECK_FAILURES must be at least 1")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OwnershipSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        return cls(
            policy=env.get("AGENTDEX_OWNERSHIP", cls.policy).strip().lower() or cls.policy,
            dns_nameservers=_nameservers(env.get("AGENTDEX_DNS_NAMESERVERS", "")),
            dns_timeout=env_float(env, "AGENTDEX_DNS_TIMEOUT", cls.dns_timeout),
            http_timeout=env_float(env, "AGENTDEX_DOMAIN_HTTP_TIMEOUT", cls.http_timeout),
            recheck_interval=env_float(env, "AGENTDEX_DOMAIN_RECHECK_INTERVAL", cls.recheck_interval),
            recheck_failures_before_lapse=env_int(
                env, "AGENTDEX_DOMAIN_RECHECK_FAILURES", cls.recheck_failures_before_lapse
            ),
            recheck_batch=env_int(env, "AGENTDEX_DOMAIN_RECHECK_BATCH", cls.recheck_batch),
        )


def _nameservers(raw: str) -> tuple[tuple[str, int], ...]:
    """`127.0.0.1:5353, [::1]:53, 9.9.9.9` -> ((address, port), ...)."""
    servers = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        host, port = item, "53"
        if item.startswith("["):  # [v6]:port
            host, _, rest = item[1:].partition("]")
            port = rest.removeprefix(":") or "53"
        elif item.count(":") == 1:
            host, port = item.split(":")
        if not port.isdigit() or not 0 < int(port) < 65536 or not _is_address(host):
            raise SettingsError(f"AGENTDEX_DNS_NAMESERVERS: {item!r} is not address:port (an IP address)")
        servers.append((host, int(port)))
    return tuple(servers)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
