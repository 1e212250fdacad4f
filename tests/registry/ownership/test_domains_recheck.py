"""The `domain-recheck` job: proven domains are checked again every interval with the method that
proved them; a proof gone for FAILURES_BEFORE_LAPSE checks in a row lapses, one still there stays."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select

from registry.audit import AuditEntry
from registry.container import Services
from registry.jobs import LeasedJob
from registry.ownership.proofs import DnsProof, HttpProof, Proofs
from registry.ownership.recheck import DomainRecheck
from registry.schedule import scheduled_jobs
from tests.registry.ownership.conftest import FAILURES_BEFORE_LAPSE, bearer
from tests.registry.ownership.test_domains_dns import principal, prove_by_dns
from tests.support.dns_server import LoopbackDns
from tests.support.jobs import FakeClock, run_job


def recheck_job(services: Services, clock: FakeClock) -> LeasedJob[Any, Any]:
    ownership = services.settings.ownership
    proofs = Proofs(
        HttpProof(services.http, timeout=ownership.http_timeout),
        DnsProof(ownership.dns_nameservers, timeout=ownership.dns_timeout),
    )
    recheck = DomainRecheck(
        services.engine,
        proofs,
        interval=ownership.recheck_interval,
        failures_before_lapse=ownership.recheck_failures_before_lapse,
        clock=clock,
    )
    return LeasedJob("domain-recheck", 1.0, recheck)


def test_the_worker_runs_the_recheck(services: Services) -> None:
    assert "domain-recheck" in [job.name for job in scheduled_jobs(services)]


def test_a_removed_record_lapses_the_domain_and_a_kept_one_stays(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str, other_token: str
) -> None:
    gone = prove_by_dns(client, dns_server, writer_token, "gone.example")
    prove_by_dns(client, dns_server, other_token, "kept.example")
    dns_server.remove(gone["challenges"]["dns"]["name"])
    interval = services.settings.ownership.recheck_interval
    clock = FakeClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=interval + 60))
    job = recheck_job(services, clock)

    first = run_job(job)
    again_at_once = run_job(job)
    after_one_failure = client.get("/v1/domains/gone.example", headers=bearer(writer_token)).get_json()
    for _ in range(FAILURES_BEFORE_LAPSE - 1):
        clock.advance(interval)
        run_job(job)

    assert (first.claimed, first.recorded, again_at_once.claimed) == (2, 2, 0)
    assert after_one_failure["status"] == "verified"
    assert services.domains.owner_of("gone.example") is None
    assert services.domains.owner_of("kept.example") == principal(services, other_token)
    lapsed = client.get("/v1/domains/gone.example", headers=bearer(writer_token)).get_json()
    assert lapsed["status"] == "lapsed" and "challenge_not_found" in lapsed["reason"]
    kept = client.get("/v1/domains/kept.example", headers=bearer(other_token)).get_json()
    assert kept["status"] == "verified" and kept["checkedAt"] == clock.now.isoformat().replace("+00:00", "Z")
    with services.sessions() as session:
        audited = session.execute(
            select(AuditEntry.principal_id, AuditEntry.detail).where(AuditEntry.action == "domain.lapse")
        ).all()
    assert [(by, detail["domain"], detail["owner"]) for by, detail in audited] == [(None, "gone.example", "alice")]


def test_a_proof_that_comes_back_resets_the_count(
    client: Any, services: Services, dns_server: LoopbackDns, writer_token: str
) -> None:
    proven = prove_by_dns(client, dns_server, writer_token, "flaky.example")
    record = proven["challenges"]["dns"]
    interval = services.settings.ownership.recheck_interval
    clock = FakeClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=interval + 60))
    job = recheck_job(services, clock)

    for _ in range(FAILURES_BEFORE_LAPSE):  # fails, recovers, fails, recovers: never twice in a row
        dns_server.remove(record["name"])
        run_job(job)
        clock.advance(interval)
        dns_server.set_txt(record["name"], record["value"])
        run_job(job)
        clock.advance(interval)

    assert services.domains.owner_of("flaky.example") == principal(services, writer_token)
