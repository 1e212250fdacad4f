"""Who is calling, and what their token lets them do: its scopes, and the domains it is narrowed to.

A token made with `--domain example.com` may act only on agents whose card URL host is
`example.com` or lies under it (`agent.example.com`): the narrowing is a restriction the token's
owner chose, never a grant, so covering subdomains can only take away. A domain written with a
port (`127.0.0.1:8443`) also needs that port; without one it covers every port. Whether the
principal may act on a domain at all (proof, policy) is ownership's question, asked separately.
"""

from __future__ import annotations

import dataclasses
import re
from urllib.parse import urlsplit

import idna

from registry.errors import Forbidden, InvalidRequest

# A DNS name (LDH labels, IDNA-encoded) or an IPv4 address, with an optional port.
LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
DOMAIN = re.compile(rf"^{LABEL}(?:\.{LABEL})*(?::\d{{1,5}})?$")


class OutsideTokenDomains(Forbidden):
    """The token is narrowed to domains and the agent's card URL lies in none of them."""

    code = "outside_token_domains"


@dataclasses.dataclass(frozen=True)
class Actor:
    """Who is calling: the principal behind a token and what the token may do. `domains` None: the
    token acts on agents anywhere; a set: only on agents whose card URL host lies in one of them.
    `token_id` None: an actor the registry made itself (a crawler acting for an owner)."""

    principal_id: int
    principal_name: str
    scopes: frozenset[str]
    domains: frozenset[str] | None = None
    token_id: int | None = None

    @property
    def is_admin(self) -> bool:
        return "admin" in self.scopes

    def can(self, scope: str) -> bool:
        return self.is_admin or scope in self.scopes

    def may_act_on(self, host: str) -> bool:
        """Whether this token may change an agent whose card URL host is `host` (`name` or
        `name:port`, as `urlsplit(card_url).netloc` gives it without credentials)."""
        if self.domains is None:
            return True
        return any(_covers(domain, host.lower().rstrip(".")) for domain in self.domains)

    def require_domain(self, host: str) -> None:
        """Raise OutsideTokenDomains (403) unless `may_act_on(host)`: the one check of a token's
        domains, called by whatever guards agent writes."""
        if not self.may_act_on(host):
            listed = ", ".join(sorted(self.domains or ()))
            raise OutsideTokenDomains(
                f"this token may act only on agents under {listed}, and {host} is not among them: use a token "
                f"made for that domain (`agentdex tokens create NAME --scope agents:write --domain {host}`) "
                "or one without --domain",
                {"host": host, "tokenDomains": sorted(self.domains or ())},
            )

    def require_domain_of(self, card_url: str) -> None:
        """`require_domain` for the host of an agent's card URL. Raises OutsideTokenDomains."""
        if self.domains is not None:
            self.require_domain(card_host(card_url))


def card_host(card_url: str) -> str:
    """The host of a card URL as tokens' domains name it: `name` or `name:port`, lower case."""
    parts = urlsplit(card_url)
    host = _a_labels((parts.hostname or "").rstrip("."))
    return f"{host}:{parts.port}" if parts.port is not None else host


def _covers(domain: str, host: str) -> bool:
    name, port = _split(domain)
    host_name, host_port = _split(host)
    if port is not None and port != host_port:
        return False
    return host_name == name or host_name.endswith("." + name)


def _split(host: str) -> tuple[str, str | None]:
    name, colon, port = host.rpartition(":")
    return (name, port) if colon and port.isdigit() else (host, None)


def normalise_domain(text: str) -> str:
    """`text` as a token's domain: lower case, IDNA-encoded, no trailing dot; `host:port` allowed.
    Raises InvalidRequest for a URL, a path, a wildcard or anything that is not a host."""
    value = _a_labels(text.strip().lower().rstrip("."))
    if len(value) > 259 or not DOMAIN.match(value):
        raise InvalidRequest(
            f"{text!r} is not a domain: give a host such as example.com (its subdomains are included) "
            "or host:port, without a scheme, path or wildcard"
        )
    return value


def _a_labels(name: str) -> str:
    """An international name in IDNA A-labels (UTS46, as ownership writes domains), so that a
    token made for `bücher.example` covers a card URL written with either form; "" when it is not
    a valid name."""
    if name.isascii():
        return name
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError:
        return ""
