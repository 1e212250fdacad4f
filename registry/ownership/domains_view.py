"""A domain entry as the API and the CLI show it: its state, and the two challenges that prove it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from registry.ownership.domains_model import VERIFIED, Domain
from registry.ownership.domains_names import is_address
from registry.ownership.proofs import DNS, Challenge


def subdomains_covered(row: Domain) -> bool:
    """Subdomains are granted by a DNS proof of the parent only: a web server at `example.com`
    does not speak for the names under it (the rule ACME applies to wildcard certificates)."""
    return row.status == VERIFIED and row.include_subdomains and row.method == DNS


def challenge_of(row: Domain) -> Challenge:
    return Challenge(row.name, row.challenge_id, row.challenge_value)


@dataclasses.dataclass(frozen=True)
class DomainView:
    domain: str
    owner: str
    status: str
    include_subdomains: bool
    subdomains_covered: bool
    method: str | None
    reason: str | None
    created_at: dt.datetime
    verified_at: dt.datetime | None
    checked_at: dt.datetime | None
    lapsed_at: dt.datetime | None
    challenge: Challenge

    @classmethod
    def of(cls, row: Domain, owner: str) -> DomainView:
        return cls(
            domain=row.name,
            owner=owner,
            status=row.status,
            include_subdomains=row.include_subdomains,
            subdomains_covered=subdomains_covered(row),
            method=row.method,
            reason=row.status_reason,
            created_at=row.created_at,
            verified_at=row.verified_at,
            checked_at=row.checked_at,
            lapsed_at=row.lapsed_at,
            challenge=challenge_of(row),
        )

    def to_dict(self) -> dict[str, Any]:
        challenge = self.challenge
        return {
            "domain": self.domain,
            "owner": self.owner,
            "status": self.status,
            "includeSubdomains": self.include_subdomains,
            "subdomainsCovered": self.subdomains_covered,
            "method": self.method,
            "reason": self.reason,
            "createdAt": _time(self.created_at),
            "verifiedAt": _time(self.verified_at),
            "checkedAt": _time(self.checked_at),
            "lapsedAt": _time(self.lapsed_at),
            "challenges": {
                "http": {"url": challenge.http_url, "value": challenge.value},
                # An IP address has no DNS records of its own to prove it with.
                "dns": None
                if is_address(self.domain)
                else {"name": challenge.dns_name, "type": "TXT", "value": challenge.value},
            },
        }


def _time(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")
