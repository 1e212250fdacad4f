"""Which IP addresses an outbound call may connect to.

The rules are a table (special-purpose ranges of RFC 6890 and friends) so that the reason
given to the user names the address class. Addresses that embed an IPv4 address
(IPv4-mapped, NAT64, 6to4) are judged by the address they lead to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from registry.outbound.policy import IPNetwork

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

_V4_RULES: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "an unspecified ('this network') address"),
    (_V4("127.0.0.0/8"), "a loopback address"),
    (_V4("169.254.0.0/16"), "a link-local address (cloud metadata endpoints live here)"),
    (_V4("224.0.0.0/4"), "a multicast address"),
    (_V4("100.64.0.0/10"), "a shared carrier-grade NAT address (RFC 6598)"),
    (_V4("10.0.0.0/8"), "a private address (RFC 1918)"),
    (_V4("172.16.0.0/12"), "a private address (RFC 1918)"),
    (_V4("192.168.0.0/16"), "a private address (RFC 1918)"),
    (_V4("255.255.255.255/32"), "the broadcast address"),
    (_V4("240.0.0.0/4"), "a reserved address"),
)

_V6_RULES: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("::/128"), "the unspecified address"),
    (_V6("::1/128"), "a loopback address"),
    (_V6("fe80::/10"), "a link-local address"),
    (_V6("fec0::/10"), "a (deprecated) site-local address"),
    (_V6("fc00::/7"), "a unique local (private) address"),
    (_V6("ff00::/8"), "a multicast address"),
    # Teredo hides the client address behind the relay; judging it is impractical and the
    # protocol is obsolete, so it is refused as a class.
    (_V6("2001::/32"), "a Teredo tunnel address"),
    (_V6("::/96"), "a deprecated IPv4-compatible address"),
    (_V6("::ffff:0:0:0/96"), "an IPv4-translated address (RFC 2765)"),
)

# Prefixes whose low 32 bits are the IPv4 address the traffic reaches (RFC 6052, RFC 8215).
_NAT64_PREFIXES = (_V6("64:ff9b::/96"), _V6("64:ff9b:1::/48"))


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to (mapped, NAT64 or 6to4), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if any(address in prefix for prefix in _NAT64_PREFIXES):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def display_address(address: IPAddress) -> str:
    """The address as people write it (``::ffff:127.0.0.1``, not ``::ffff:7f00:1``)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return f"::ffff:{address.ipv4_mapped}"
    return str(address)


def refusal_reason(address: IPAddress, allowed: Sequence[IPNetwork] = ()) -> str | None:
    """None when a connection to ``address`` is allowed, else why not, as a phrase.

    ``allowed`` networks win over every rule; they are matched against the address and
    against the IPv4 address it embeds.
    """
    embedded = embedded_ipv4(address)
    if _in_any(address, allowed) or (embedded is not None and _in_any(embedded, allowed)):
        return None
    if embedded is not None:
        reason = _address_class(embedded)
        return None if reason is None else f"an IPv6 address embedding {embedded}, {reason}"
    return _address_class(address)


def _address_class(address: IPAddress) -> str | None:
    rules: Sequence[tuple[IPNetwork, str]] = _V4_RULES if isinstance(address, ipaddress.IPv4Address) else _V6_RULES
    for network, reason in rules:
        if address in network:
            return reason
    if not address.is_global:
        # Documentation, benchmarking and protocol-assignment ranges (RFC 6890).
        return "a special-purpose address that is not globally reachable"
    return None


def _in_any(address: IPAddress, networks: Sequence[IPNetwork]) -> bool:
    return any(address.version == net.version and address in net for net in networks)
