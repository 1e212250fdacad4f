"""Address classes: what the client refuses to connect to, and why."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.outbound.addresses import embedded_ipv4, refusal_reason

REFUSED = {
    "10.0.0.1": "private",
    "172.16.5.4": "private",
    "192.168.1.1": "private",
    "127.0.0.1": "loopback",
    "169.254.169.254": "link-local",
    "100.64.0.1": "carrier-grade NAT",
    "224.0.0.1": "multicast",
    "0.0.0.0": "unspecified",
    "255.255.255.255": "broadcast",
    "240.0.0.1": "reserved",
    "192.0.2.10": "not globally reachable",
    "::": "unspecified",
    "::1": "loopback",
    "fe80::1": "link-local",
    "fd00::1": "unique local",
    "ff02::1": "multicast",
    "2001:db8::1": "not globally reachable",
    "::ffff:127.0.0.1": "loopback",
    "::ffff:169.254.169.254": "link-local",
    "::ffff:0:10.0.0.1": "IPv4-translated",
    "::10.0.0.1": "IPv4-compatible",
    "64:ff9b::a00:1": "private",
    "2002:a00:1::1": "private",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
}

ALLOWED = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize(("text", "phrase"), sorted(REFUSED.items()))
def test_special_purpose_addresses_are_refused_with_their_class(text: str, phrase: str) -> None:
    reason = refusal_reason(ipaddress.ip_address(text))
    assert reason is not None and phrase in reason


@pytest.mark.parametrize("text", ALLOWED)
def test_public_addresses_are_allowed(text: str) -> None:
    assert refusal_reason(ipaddress.ip_address(text)) is None


def test_an_allowlisted_network_wins_over_every_rule() -> None:
    allowed = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("fd00::/8"))
    assert refusal_reason(ipaddress.ip_address("127.0.0.5"), allowed) is None
    assert refusal_reason(ipaddress.ip_address("fd00::7"), allowed) is None
    # The mapped form leads to the same IPv4 host, so the allowlist covers it too.
    assert refusal_reason(ipaddress.ip_address("::ffff:127.0.0.1"), allowed) is None
    assert refusal_reason(ipaddress.ip_address("10.0.0.1"), allowed) is not None


def test_embedded_ipv4_is_found_in_mapped_nat64_and_6to4_addresses() -> None:
    ten = ipaddress.IPv4Address("10.0.0.1")
    assert embedded_ipv4(ipaddress.ip_address("::ffff:10.0.0.1")) == ten
    assert embedded_ipv4(ipaddress.ip_address("64:ff9b::10.0.0.1")) == ten
    assert embedded_ipv4(ipaddress.ip_address("2002:a00:1::")) == ten
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1")) is None


# No deadline: a shared 2-core machine under load makes pure-CPU timings noisy.
@settings(deadline=None)
@given(st.ip_addresses(v=4))
def test_a_mapped_address_is_judged_like_the_ipv4_address_it_embeds(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(address))
    direct = refusal_reason(address) is None
    assert (refusal_reason(mapped) is None) == direct
    assert (refusal_reason(nat64) is None) == direct


# No deadline: a shared 2-core machine under load makes pure-CPU timings noisy.
@settings(deadline=None)
@given(st.ip_addresses())
def test_every_address_gets_a_verdict(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    reason = refusal_reason(address)
    assert reason is None or reason.strip()
    if reason is None:
        judged = embedded_ipv4(address) or address
        assert not (judged.is_loopback or judged.is_private or judged.is_link_local or judged.is_multicast)
