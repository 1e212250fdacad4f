"""Domain proofs wired from the settings: the read side (`covers`, `owner_of`), the service
behind `/v1/domains`, and the re-check job's work."""

from __future__ import annotations

import dataclasses

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.outbound import SafeHttpClient
from registry.ownership.domains import DomainRegistry
from registry.ownership.domains_service import DomainService
from registry.ownership.proofs import DnsProof, HttpProof, Proofs
from registry.ownership.recheck import DomainRecheck
from registry.settings import Settings


@dataclasses.dataclass(frozen=True)
class DomainServices:
    registry: DomainRegistry
    service: DomainService
    recheck: DomainRecheck

    def covers(self, principal_id: int, host: str) -> bool:
        return self.registry.covers(principal_id, host)

    def owner_of(self, host: str) -> int | None:
        return self.registry.owner_of(host)


def build_domains(
    settings: Settings, engine: Engine, sessions: sessionmaker[Session], http: SafeHttpClient
) -> DomainServices:
    ownership = settings.ownership
    proofs = Proofs(
        HttpProof(http, timeout=ownership.http_timeout),
        DnsProof(ownership.dns_nameservers, timeout=ownership.dns_timeout),
    )
    return DomainServices(
        registry=DomainRegistry(sessions),
        service=DomainService(
            sessions, proofs, allow_http=settings.allow_http, recheck_interval=ownership.recheck_interval
        ),
        recheck=DomainRecheck(
            engine,
            proofs,
            interval=ownership.recheck_interval,
            failures_before_lapse=ownership.recheck_failures_before_lapse,
            lease_seconds=settings.worker.lease_seconds,
        ),
    )
