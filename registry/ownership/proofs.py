"""The two ways to prove control of a domain, checked at once and never cached: a value served
over HTTP(S) at a well-known path, or a DNS TXT record. Both raise a `ProofFailed` subclass that
says what was found instead.

The HTTP challenge goes through the registry's `SafeHttpClient` (https only; plain http only for
a `host:port` domain where the operator allowed http, on allowlisted networks). The DNS challenge
asks the configured nameservers (`AGENTDEX_DNS_NAMESERVERS`) or the system's, bounded in time.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import dns.exception
import dns.nameserver
import dns.resolver

from registry.outbound import OutboundError, OutboundRefused, OutboundTimeout, SafeHttpClient
from registry.ownership.domains_names import hostname_of, is_address
from registry.ownership.errors import (
    ChallengeMismatch,
    ChallengeNotFound,
    ChallengeUnreachable,
    ProofMethodUnavailable,
)

HTTP, DNS = "http", "dns"
METHODS = (HTTP, DNS)
CHALLENGE_PATH = "/.well-known/agentdex-challenge/"
DNS_LABEL = "_agentdex-challenge"
MAX_CHALLENGE_BYTES = 1024  # the value is 43 characters; a page served instead is not read whole
SHOWN = 100  # characters of a wrong answer repeated in the error


@dataclasses.dataclass(frozen=True)
class Challenge:
    """What a domain must show: `value`, at the HTTP path ending in `id` or in the TXT record."""

    domain: str
    id: str
    value: str

    @property
    def http_url(self) -> str:
        # A domain with a port was accepted only where plain http is allowed: it is fetched over http.
        scheme = "http" if ":" in self.domain.rsplit("]", 1)[-1] else "https"
        return f"{scheme}://{self.domain}{CHALLENGE_PATH}{self.id}"

    @property
    def dns_name(self) -> str:
        return f"{DNS_LABEL}.{hostname_of(self.domain)}"


class Proof(Protocol):
    def check(self, challenge: Challenge) -> None:
        """Return when the challenge holds; raise a ProofFailed subclass saying what was found."""


class HttpProof:
    def __init__(self, http: SafeHttpClient, *, timeout: float) -> None:
        self._http = http
        self._timeout = timeout

    def check(self, challenge: Challenge) -> None:
        url = challenge.http_url
        details = {"method": HTTP, "url": url}
        try:
            response = self._http.get(url, timeout=self._timeout, max_bytes=MAX_CHALLENGE_BYTES)
        except OutboundRefused as error:
            raise ChallengeUnreachable(f"{url} may not be fetched: {error.message}", details) from error
        except OutboundTimeout as error:
            raise ChallengeUnreachable(f"{url} did not answer within {self._timeout:g} s", details) from error
        except OutboundError as error:
            raise ChallengeUnreachable(f"{url} could not be fetched: {error.message}", details) from error
        if response.status != 200:
            raise ChallengeNotFound(
                f"{url} answered HTTP {response.status}; serve the challenge value there with status 200",
                {**details, "status": response.status},
            )
        found = response.body.decode("utf-8", errors="replace").strip()
        if found != challenge.value:
            raise ChallengeMismatch(
                f"{url} serves {found[:SHOWN]!r}, not the challenge value", {**details, "found": found[:SHOWN]}
            )


class DnsProof:
    """`nameservers`: (address, port) pairs; empty: the system's resolver configuration."""

    def __init__(self, nameservers: tuple[tuple[str, int], ...], *, timeout: float) -> None:
        self._nameservers = nameservers
        self._timeout = timeout

    def check(self, challenge: Challenge) -> None:
        if is_address(challenge.domain):
            raise ProofMethodUnavailable(
                f"{challenge.domain} is an IP address, which has no DNS records of its own: use the HTTP challenge",
                {"method": DNS},
            )
        name = challenge.dns_name
        found = self._txt_values(name)
        if challenge.value not in found:
            raise ChallengeMismatch(
                f"the TXT records of {name} hold {found[:10]!r}, not the challenge value",
                {"method": DNS, "record": name, "found": [value[:SHOWN] for value in found[:10]]},
            )

    def _txt_values(self, name: str) -> list[str]:
        details = {"method": DNS, "record": name}
        try:
            answer = self._resolver().resolve(name, "TXT", lifetime=self._timeout, search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer) as error:
            raise ChallengeNotFound(f"there is no TXT record at {name}", details) from error
        except dns.resolver.LifetimeTimeout as error:
            raise ChallengeUnreachable(f"no DNS answer for {name} within {self._timeout:g} s", details) from error
        except dns.exception.DNSException as error:  # SERVFAIL everywhere, a refused query, a malformed name
            raise ChallengeUnreachable(f"the DNS lookup of {name} failed: {error}", details) from error
        # A TXT record is one or more character strings, to be read joined (RFC 7208 §3.3 does so).
        return [b"".join(record.strings).decode("utf-8", errors="replace") for record in answer]

    def _resolver(self) -> dns.resolver.Resolver:
        # A new resolver each time: no cache, so a removed record is seen as removed at once.
        if not self._nameservers:
            return dns.resolver.Resolver()
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = [dns.nameserver.Do53Nameserver(host, port) for host, port in self._nameservers]
        return resolver


class Proofs:
    """Both methods, by name."""

    def __init__(self, http: Proof, dns: Proof) -> None:
        self._by_method: dict[str, Proof] = {HTTP: http, DNS: dns}

    def check(self, method: str, challenge: Challenge) -> None:
        self._by_method[method].check(challenge)
