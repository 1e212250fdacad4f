"""What outbound calls may do: the operator's policy, as data."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_USER_AGENT = "Agentdex/0.1 (+https://github.com/agentdex)"


@dataclass(frozen=True)
class OutboundPolicy:
    """Limits for every outbound HTTP exchange of the registry. Raises ValueError when a limit is not positive.

    ``allowed_networks`` may be reached although private, loopback, link-local, … (tests allowlist
    ``127.0.0.0/8``). ``total_timeout`` bounds the whole exchange, redirects and body included;
    ``max_redirects = 0`` returns redirects to the caller. ``ca_bundle`` is a PEM file of trusted
    roots (default: certifi's). ``pool_connections`` host pools are kept, each with up to
    ``pool_maxsize`` idle keep-alive connections, as in ``requests.adapters.HTTPAdapter``.
    Refusals name ``allow_http_setting`` and ``allowed_networks_setting`` as the way to lift them.
    """

    allow_http: bool = False
    allowed_networks: tuple[IPNetwork, ...] = ()
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 15.0
    max_response_bytes: int = 1_048_576
    max_redirects: int = 3
    user_agent: str = DEFAULT_USER_AGENT
    ca_bundle: str | None = None
    pool_connections: int = 256
    pool_maxsize: int = 16
    # The settings that lift the refusals, named in their messages: the variables `registry.settings`
    # reads into ``allow_http`` and ``allowed_networks``.
    allow_http_setting: str = "AGENTDEX_ALLOW_HTTP"
    allowed_networks_setting: str = "AGENTDEX_ALLOWED_NETWORKS"

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "read_timeout", "total_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"OutboundPolicy.{name} must be > 0")
        for name in ("max_response_bytes", "pool_connections", "pool_maxsize"):
            if getattr(self, name) < 1:
                raise ValueError(f"OutboundPolicy.{name} must be >= 1")
        if self.max_redirects < 0:
            raise ValueError("OutboundPolicy.max_redirects must be >= 0")
        if not self.user_agent or any(c in self.user_agent for c in "\r\n\0"):
            raise ValueError("OutboundPolicy.user_agent must be a non-empty single line")
        for network in self.allowed_networks:
            if not isinstance(network, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
                raise ValueError(f"allowed_networks holds {network!r}, not an ip_network")
