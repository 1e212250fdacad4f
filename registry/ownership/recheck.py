"""Re-checking proven domains (`LeasedWork` for the `domain-recheck` job): every
`recheck_interval`, each held domain's proof is checked again with the method that proved it.
A proof that fails `failures_before_lapse` checks in a row lapses: the domain is no longer its
owner's, the owner sees `status: lapsed` and the reason, the audit log has a `domain.lapse` row
and the log a warning. One failure (a deploy, a DNS hiccup) only counts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update

from registry.audit import AuditEntry
from registry.auth import Principal
from registry.db import writer_lock
from registry.db.types import utcnow
from registry.jobs import LeaseColumns
from registry.ownership.domains_model import LAPSED, VERIFIED, Domain
from registry.ownership.errors import ProofFailed
from registry.ownership.proofs import Challenge, Proofs

log = logging.getLogger(__name__)
DOMAINS = Domain.__table__
DOMAIN_LEASE = LeaseColumns(
    DOMAINS, DOMAINS.c.pk, DOMAINS.c.next_check_at, DOMAINS.c.check_lease_owner, DOMAINS.c.check_lease_until
)
_CLAIMED = tuple(DOMAINS.c[name] for name in ("name", "owner_id", "challenge_id", "challenge_value", "method"))
_CLAIM = DOMAIN_LEASE.claim_statement(where=[DOMAINS.c.status == VERIFIED], returning=_CLAIMED)


@dataclasses.dataclass(frozen=True)
class DueDomain:
    pk: int
    owner_id: int
    method: str
    challenge: Challenge


@dataclasses.dataclass(frozen=True)
class RecheckOutcome:
    item: DueDomain
    failure: str | None = None  # None: the proof still holds


class DomainRecheck:
    def __init__(
        self,
        engine: Engine,
        proofs: Proofs,
        *,
        interval: float,
        failures_before_lapse: int,
        lease_seconds: float = 300.0,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._engine = engine
        self._writer = writer_lock(engine)
        self._proofs = proofs
        self._interval = dt.timedelta(seconds=interval)
        self._failures_before_lapse = failures_before_lapse
        self._lease_seconds = lease_seconds
        self._clock = clock

    def claim(self, owner: str, limit: int) -> list[DueDomain]:
        with self._writer.hold(), self._engine.begin() as conn:
            params = DOMAIN_LEASE.claim_params(owner, self._clock(), self._lease_seconds, limit)
            rows = conn.execute(_CLAIM, params).all()
        return [
            DueDomain(row.pk, row.owner_id, row.method, Challenge(row.name, row.challenge_id, row.challenge_value))
            for row in rows
        ]

    def perform(self, item: DueDomain) -> RecheckOutcome:
        """Check the proof again; a failed check is an outcome, never raised."""
        try:
            self._proofs.check(item.method, item.challenge)
        except ProofFailed as failure:
            return RecheckOutcome(item, f"{failure.code}: {failure.message}"[:400])
        return RecheckOutcome(item)

    def record(self, owner: str, outcomes: Sequence[RecheckOutcome]) -> int:
        now = self._clock()
        with self._writer.hold(), self._engine.begin() as conn:
            held = DOMAIN_LEASE.hold(
                conn, [outcome.item.pk for outcome in outcomes], owner=owner, now=now, seconds=self._lease_seconds
            )
            mine = [outcome for outcome in outcomes if outcome.item.pk in held]
            for outcome in mine:
                self._record_one(conn, outcome, now)
        return len(mine)

    def _record_one(self, conn: Connection, outcome: RecheckOutcome, now: dt.datetime) -> None:
        pk = outcome.item.pk
        still_held = (Domain.pk == pk) & (Domain.status == VERIFIED)  # not removed or taken over meanwhile
        free = {"check_lease_owner": None, "check_lease_until": None, "checked_at": now}
        if outcome.failure is None:
            conn.execute(
                update(Domain).where(still_held).values(check_failures=0, next_check_at=now + self._interval, **free)
            )
            return
        failures = conn.scalar(select(Domain.check_failures).where(still_held))
        if failures is None:
            return
        if failures + 1 < self._failures_before_lapse:
            conn.execute(
                update(Domain)
                .where(still_held)
                .values(check_failures=failures + 1, next_check_at=now + self._interval, **free)
            )
            log.info("domain %s: re-check %d failed: %s", outcome.item.challenge.domain, failures + 1, outcome.failure)
            return
        self._lapse(conn, outcome, failures + 1, now, free)

    def _lapse(
        self, conn: Connection, outcome: RecheckOutcome, failures: int, now: dt.datetime, free: dict[str, Any]
    ) -> None:
        domain = outcome.item.challenge.domain
        reason = f"the {outcome.item.method} proof failed {failures} re-checks in a row; last: {outcome.failure}"
        conn.execute(
            update(Domain)
            .where(Domain.pk == outcome.item.pk)
            .values(
                status=LAPSED,
                status_reason=reason[:500],
                lapsed_at=now,
                next_check_at=None,
                check_failures=failures,
                **free,
            )
        )
        owner = conn.scalar(select(Principal.name).where(Principal.id == outcome.item.owner_id))
        detail = {"domain": domain, "owner": owner, "reason": reason[:500]}
        conn.execute(
            insert(AuditEntry).values(
                at=now,
                principal_id=None,
                subject_principal_id=outcome.item.owner_id,  # the owner reads it in their audit log
                action="domain.lapse",
                detail=detail,
            )
        )
        log.warning("domain %s of %r lapsed: %s", domain, owner, reason)
