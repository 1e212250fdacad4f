"""How a setting is read from the environment: one parser per kind of value, each raising a
SettingsError that names the variable and says what it should look like."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsError(ValueError):
    """A configuration value is missing or malformed; the message names the variable and the fix."""


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r} is not a boolean; use true or false")


def env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise SettingsError(f"{name}={raw!r} must be greater than zero")
    return value


def env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise SettingsError(f"{name}={raw!r} must be greater than zero")
    return value


def env_delays(env: Mapping[str, str], name: str, default: tuple[float, ...]) -> tuple[float, ...]:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return tuple(float(part) for part in raw.split(","))
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a comma-separated list of seconds such as 0,5,300") from None


def env_fraction(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a number such as 0.2") from None


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def env_networks(env: Mapping[str, str], name: str) -> tuple[IPNetwork, ...]:
    """A comma-separated list of CIDRs (`127.0.0.0/8, ::1/128`); empty when unset."""
    networks = []
    for part in (p.strip() for p in env.get(name, "").split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise SettingsError(f"{name} contains {part!r}, which is not a CIDR such as 127.0.0.0/8") from None
    return tuple(networks)
