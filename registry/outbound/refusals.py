"""The policy's refusals of plain http and of private, loopback, … addresses, worded so that whoever
meets one learns which setting lifts it: someone registering an agent on their own machine reads
`AGENTDEX_ALLOW_HTTP=true` and `AGENTDEX_ALLOWED_NETWORKS` with the network to add, in one message.
The setting names come from the policy (`OutboundPolicy.allow_http_setting`, `…networks_setting`);
`details.allowedBy` holds the same advice as data: {setting: value}.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from registry.outbound.addresses import IPAddress, display_address, embedded_ipv4, refusal_reason
from registry.outbound.errors import OutboundRefused
from registry.outbound.policy import OutboundPolicy
from registry.outbound.target import Target


@dataclass(frozen=True)
class AddressRefusal:
    """Every address of a host refused: why each one is, and the networks that would allow them."""

    reasons: tuple[str, ...]
    networks: tuple[str, ...]  # one host network per address, e.g. "127.0.0.1/32"

    @property
    def advice(self) -> str:
        return ",".join(self.networks)


def first_allowed(addresses: Sequence[IPAddress], policy: OutboundPolicy) -> IPAddress | AddressRefusal:
    """The first of `addresses` the policy allows, or why it allows none of them."""
    reasons, networks = [], []
    for address in addresses:
        reason = refusal_reason(address, policy.allowed_networks)
        if reason is None:
            return address
        reasons.append(f"{display_address(address)} is {reason}")
        # An IPv4-mapped (or NAT64, 6to4) address is allowed by its IPv4 network.
        reached = embedded_ipv4(address) or address
        networks.append(f"{reached}/{reached.max_prefixlen}")
    return AddressRefusal(tuple(reasons), tuple(dict.fromkeys(networks)))


def refused_address(
    target: Target, refusal: AddressRefusal, policy: OutboundPolicy, via: str | None
) -> OutboundRefused:
    setting = policy.allowed_networks_setting
    return OutboundRefused(
        f"{_where(target, via)} is refused: {'; '.join(refusal.reasons)}. The registry reaches such an "
        f"address only when its operator adds the network to {setting} (comma-separated CIDRs), "
        f"e.g. {setting}={refusal.advice}",
        url=target.url,
        details={"allowedBy": {setting: refusal.advice}},
    )


def refused_http(
    target: Target, policy: OutboundPolicy, via: str | None, refusal: AddressRefusal | None
) -> OutboundRefused:
    """Plain http refused; `refusal`, when the address is refused too, so both are named at once."""
    allow_http = policy.allow_http_setting
    message = (
        f"{_where(target, via)} is refused: plain http is not allowed, only https. "
        f"The registry's operator allows http with {allow_http}=true"
    )
    allowed_by = {allow_http: "true"}
    if refusal is not None:
        networks = policy.allowed_networks_setting
        message += f"; {'; '.join(refusal.reasons)}, so also add it to {networks}, e.g. {networks}={refusal.advice}"
        allowed_by[networks] = refusal.advice
    return OutboundRefused(message, url=target.url, details={"allowedBy": allowed_by})


def _where(target: Target, via: str | None) -> str:
    return f"{target.url} (redirected from {via})" if via else target.url
