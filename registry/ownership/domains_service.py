"""Adding, proving, listing and removing domains (`/v1/domains`, `agentdex domains`).

A domain is proven by the account that asks for it, with a challenge value of its own. Several
accounts may try the same domain; at most one holds it. A fresh proof takes a domain over from
whoever held it: whoever controls the domain now speaks for it (a sold or moved domain must not
stay with its former owner). The former owner's entry lapses with the reason, and the audit log
says who took it. Proofs are checked with no transaction open; the writes that follow are one
transaction each, with their audit rows.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from registry.audit import AuditEntry
from registry.auth import Actor, Principal
from registry.db.types import utcnow
from registry.ownership.domains_model import LAPSED, PENDING, VERIFIED, Domain
from registry.ownership.domains_names import normalize_domain
from registry.ownership.domains_view import DomainView, challenge_of
from registry.ownership.errors import DomainNotFound, ProofFailed
from registry.ownership.proofs import Proofs

log = logging.getLogger(__name__)
ADD_HINT = "add it first: `agentdex domains add {domain}` (POST /v1/domains)"


class DomainService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        proofs: Proofs,
        *,
        allow_http: bool,
        recheck_interval: float,
        clock: Callable[[], dt.datetime] = utcnow,
        new_secret: Callable[[int], str] = secrets.token_urlsafe,
    ) -> None:
        self._sessions = sessions
        self._proofs = proofs
        self._allow_http = allow_http
        self._recheck = dt.timedelta(seconds=recheck_interval)
        self._clock = clock
        self._new_secret = new_secret

    def normalize(self, raw: str) -> str:
        """Raises InvalidDomain."""
        return normalize_domain(raw, allow_http=self._allow_http)

    def add(self, actor: Actor, raw: str, *, include_subdomains: bool = False) -> tuple[DomainView, bool]:
        """The caller's entry for the domain, created if new: (entry, created). Adding again
        returns the same challenge; `include_subdomains` is updated (widening needs a DNS proof
        before it covers anything). Raises InvalidDomain, OutsideTokenDomains."""
        name = self.normalize(raw)
        actor.require_domain(name)
        try:
            with self._sessions.begin() as session:
                session.add(self._new_row(actor, name, include_subdomains))
                self._audit(session, actor.principal_id, "domain.add", name, includeSubdomains=include_subdomains)
            created = True
        except IntegrityError:  # added before (or by a concurrent request): keep its challenge
            created = False
        with self._sessions.begin() as session:
            row = self._own(session, actor, name)
            if row.include_subdomains != include_subdomains:
                row.include_subdomains = include_subdomains
                self._audit(session, actor.principal_id, "domain.update", name, includeSubdomains=include_subdomains)
            return DomainView.of(row, actor.principal_name), created

    def verify(self, actor: Actor, raw: str, method: str) -> DomainView:
        """Check one challenge of the caller's entry; proven, the domain is the caller's (taken over
        from its holder, if any). Raises DomainNotFound, a ProofFailed subclass, OutsideTokenDomains."""
        name = self.normalize(raw)
        actor.require_domain(name)
        with self._sessions() as session:
            challenge = challenge_of(self._own(session, actor, name))
        try:
            self._proofs.check(method, challenge)  # network I/O: no transaction open
        except ProofFailed as failure:
            self._note_failure(actor, name, failure)
            raise
        try:
            return self._prove(actor, name, method)
        except IntegrityError:  # another account proved it between our read and write: ours is newer
            return self._prove(actor, name, method)

    def listed(self, actor: Actor) -> list[DomainView]:
        """The caller's entries (an admin: everyone's), by domain."""
        query = select(Domain, Principal.name).join(Principal, Principal.id == Domain.owner_id)
        if not actor.is_admin:
            query = query.where(Domain.owner_id == actor.principal_id)
        with self._sessions() as session:
            rows = session.execute(query.order_by(Domain.name, Domain.pk)).all()
            return [DomainView.of(row, owner) for row, owner in rows]

    def get(self, actor: Actor, raw: str) -> DomainView:
        """The caller's entry; an admin without one sees the holder's (or the latest attempt).
        Raises DomainNotFound."""
        name = self.normalize(raw)
        with self._sessions() as session:
            row = self._visible(session, actor, name)
            return DomainView.of(row, self._principal_name(session, row.owner_id))

    def remove(self, actor: Actor, raw: str) -> DomainView:
        """Delete the caller's entry (an admin: the one `get` shows); a held domain is released.
        Raises DomainNotFound."""
        name = self.normalize(raw)
        with self._sessions.begin() as session:
            row = self._visible(session, actor, name)
            view = DomainView.of(row, self._principal_name(session, row.owner_id))
            session.delete(row)
            self._audit(session, actor.principal_id, "domain.remove", name, owner=view.owner, status=row.status)
        return view

    def _prove(self, actor: Actor, name: str, method: str) -> DomainView:
        now = self._clock()
        with self._sessions.begin() as session:
            previous = session.execute(
                select(Domain, Principal.name)
                .join(Principal, Principal.id == Domain.owner_id)
                .where(Domain.name == name, Domain.status == VERIFIED, Domain.owner_id != actor.principal_id)
            ).first()
            if previous is not None:
                self._take_over(session, actor, previous[0], previous[1], now)
            row = self._own(session, actor, name)
            row.status, row.method, row.status_reason = VERIFIED, method, None
            row.verified_at = row.checked_at = now
            row.lapsed_at, row.check_failures = None, 0
            row.next_check_at = now + self._recheck
            session.flush()  # the partial unique index speaks here, inside our retry
            former = {"previousOwner": previous[1]} if previous is not None else {}
            subject = previous[0].owner_id if previous is not None else None
            self._audit(session, actor.principal_id, "domain.verify", name, subject, method=method, **former)
            return DomainView.of(row, actor.principal_name)

    def _take_over(self, session: Session, actor: Actor, held: Domain, holder: str, now: dt.datetime) -> None:
        reason = f"taken over: account {actor.principal_name!r} proved {held.name} at {_stamp(now)}"
        session.execute(
            update(Domain)
            .where(Domain.pk == held.pk)
            .values(status=LAPSED, status_reason=reason, lapsed_at=now, next_check_at=None)
        )
        self._audit(session, actor.principal_id, "domain.lapse", held.name, held.owner_id, owner=holder, reason=reason)
        log.warning("domain %s passed from %r to %r: %s", held.name, holder, actor.principal_name, reason)

    def _note_failure(self, actor: Actor, name: str, failure: ProofFailed) -> None:
        """Keep why the last attempt failed on an entry not (or no longer) proven, for GET to show;
        a held domain is left to its re-checks."""
        with self._sessions.begin() as session:
            session.execute(
                update(Domain)
                .where(Domain.name == name, Domain.owner_id == actor.principal_id, Domain.status != VERIFIED)
                .values(status_reason=f"{failure.code}: {failure.message}"[:500])
            )

    def _new_row(self, actor: Actor, name: str, include_subdomains: bool) -> Domain:
        return Domain(
            name=name,
            owner_id=actor.principal_id,
            include_subdomains=include_subdomains,
            challenge_id=self._new_secret(16),
            challenge_value=self._new_secret(32),
            status=PENDING,
            created_at=self._clock(),
            check_failures=0,
        )

    def _own(self, session: Session, actor: Actor, name: str) -> Domain:
        row = session.scalar(select(Domain).where(Domain.name == name, Domain.owner_id == actor.principal_id))
        if row is None:
            raise DomainNotFound(f"you have no entry for {name}; {ADD_HINT.format(domain=name)}", {"domain": name})
        return row

    def _visible(self, session: Session, actor: Actor, name: str) -> Domain:
        if not actor.is_admin:
            return self._own(session, actor, name)
        rows = session.scalars(select(Domain).where(Domain.name == name)).all()
        mine = [row for row in rows if row.owner_id == actor.principal_id]
        held = [row for row in rows if row.status == VERIFIED]
        latest = sorted(rows, key=lambda row: row.created_at, reverse=True)
        for row in [*mine, *held, *latest]:
            return row
        raise DomainNotFound(f"no account has added {name}", {"domain": name})

    @staticmethod
    def _principal_name(session: Session, principal_id: int) -> str:
        return session.scalar(select(Principal.name).where(Principal.id == principal_id)) or str(principal_id)

    def _audit(
        self, session: Session, by: int | None, action: str, domain: str, subject: int | None = None, **detail: Any
    ) -> None:
        """`subject`: the previous owner of a domain taken over, who reads the entry in their audit log."""
        at, detail = self._clock(), {"domain": domain, **detail}
        session.add(AuditEntry(at=at, principal_id=by, subject_principal_id=subject, action=action, detail=detail))


def _stamp(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
