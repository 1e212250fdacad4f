"""Who holds which domain: the read side other parts ask (`covers`, `owner_of`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from registry.ownership.domains_model import VERIFIED, Domain
from registry.ownership.domains_names import covering_names, host_of_url, normalize_domain
from registry.ownership.domains_view import subdomains_covered
from registry.ownership.errors import InvalidDomain


class DomainRegistry:
    """Answers from the database each time, so a proof or a lapse made by any process counts at once.

    Subdomains count only for a domain proven by DNS with `includeSubdomains` (`subdomains_covered`).
    The nearest proof wins: when one account proved `example.com` with its subdomains and another
    proved `api.example.com` itself, `api.example.com` belongs to the second."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def owner_of(self, host: str) -> int | None:
        """The principal holding `host` (a domain name, `host:port`, or a URL), or None."""
        domain = _domain(host)
        if domain is None:
            return None
        names = covering_names(domain)
        with self._sessions() as session:
            rows = session.scalars(select(Domain).where(Domain.status == VERIFIED, Domain.name.in_(names))).all()
        held = {row.name: row for row in rows}
        for name in names:  # nearest first
            row = held.get(name)
            if row is not None and (name == domain or subdomains_covered(row)):
                return row.owner_id
        return None

    def covers(self, principal_id: int, host: str) -> bool:
        """Whether `principal_id` holds `host`: a live proof of it, or of a parent proven with its
        subdomains (and no nearer proof by someone else)."""
        return self.owner_of(host) == principal_id


def _domain(host: str) -> str | None:
    if "://" in host:
        return host_of_url(host)
    try:
        return normalize_domain(host, allow_http=True)  # whatever was stored was allowed when proven
    except InvalidDomain:
        return None
