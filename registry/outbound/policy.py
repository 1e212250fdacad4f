"""What outbound calls may do: the operator's policy, as data."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_USER_AGENT = "Agentdex/0.1 (+https://github.com/agentdex)"


@dataclass(frozen=True)
class OutboundPolicy:
    """Limits for every outbound HTTP exchange of the registry.

    ``allowed_networks`` are CIDRs that may be reached although their addresses are private,
    loopback, link-local, … (tests allowlist ``127.0.0.0/8``). ``total_timeout`` is the wall
    clock for the whole exchange including redirects and the body. ``max_redirects = 0``
    means redirects are returned to the caller, never followed.

    ``ca_bundle`` is a PEM file of trusted roots (default: certifi's bundle, the one
    ``requests`` uses). ``pool_connections`` is how many host pools are kept and
    ``pool_maxsize`` how many idle keep-alive connections each keeps, as in
    ``requests.adapters.HTTPAdapter``.

    Raises ValueError when a limit is not positive.
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
