"""Re-crawling registered domains (the `manifest-recrawl` job): new entries are registered, changed
ones get a new card version, removed ones are deprecated with a reason and reactivated when they
come back; agents registered directly are never deprecated; failures change nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from registry.discovery import ManifestCrawling, manifest_crawling
from registry.jobs import LeasedJob
from registry.schema import ManifestSource
from tests.support.ard_publishers import WELL_KNOWN, ArdPublisher, serving
from tests.support.cards import make_card
from tests.support.jobs import FakeClock, run_job

LATER = 2 * 3600  # past the default crawl interval (3600 s, jittered by 10 %)


@pytest.fixture
def publisher() -> Iterator[ArdPublisher]:
    yield from serving()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def crawling(services, clock) -> ManifestCrawling:  # type: ignore[no-untyped-def]
    return manifest_crawling(services.settings, services.engine, services.http, services.catalog, clock=clock)


@pytest.fixture
def job(crawling) -> LeasedJob:  # type: ignore[no-untyped-def]
    return LeasedJob("manifest-recrawl", 5, crawling.recrawl, batch=2)


def recrawl(job, clock) -> None:  # type: ignore[no-untyped-def]
    clock.advance(LATER)
    report = run_job(job)
    assert (report.claimed, report.recorded, report.failed) == (1, 1, 0), report


def agents(client) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    page = client.get("/v1/agents", query_string={"status": "any", "limit": 200}).json
    return {agent["name"]: agent for agent in page["items"]}


def source_row(services):  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return conn.execute(select(ManifestSource)).one()


def test_a_recrawl_registers_new_entries_updates_changed_ones_and_deprecates_removed_ones(
    client, actor, crawling, job, clock, publisher
):
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta"), publisher.by_url("gamma")])
    crawling.domains.register(actor, publisher.domain)
    assert {name: a["status"] for name, a in agents(client).items()} == dict.fromkeys(
        ["Alpha", "Beta", "Gamma"], "active"
    )

    alpha = make_card("Alpha", tags=["alpha"], description="Alpha, now with forecasts")
    publisher.publish(
        [
            publisher.by_url("alpha", card=alpha, version="2.0.0"),  # the entry and its card changed
            publisher.inline("beta", card=make_card("Beta", tags=["beta", "new"])),
            publisher.inline("eta"),
        ]
    )
    recrawl(job, clock)
    now = agents(client)
    assert now["Eta"]["status"] == "active"
    assert (now["Alpha"]["cardVersion"], now["Alpha"]["description"]) == (2, "Alpha, now with forecasts")
    assert (now["Beta"]["cardVersion"], now["Beta"]["tags"]) == (2, ["beta", "new"])
    assert now["Gamma"]["status"] == "deprecated"
    assert now["Gamma"]["statusMessage"] == f"no longer listed in {publisher.url(WELL_KNOWN)}"
    (listing,) = client.get(f"/v1/agents/{now['Gamma']['id']}/listings").json["items"]
    assert listing["listed"] is False and listing["delistedAt"] is not None


def test_an_entry_that_comes_back_is_reactivated(client, actor, crawling, job, clock, publisher):
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")])
    crawling.domains.register(actor, publisher.domain)
    publisher.publish([publisher.by_url("alpha")])
    recrawl(job, clock)
    assert agents(client)["Beta"]["status"] == "deprecated"
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")])
    recrawl(job, clock)
    beta = agents(client)["Beta"]
    assert (beta["status"], beta["statusMessage"]) == ("active", None)


def test_an_agent_deprecated_by_a_person_is_not_reactivated(client, auth, actor, crawling, job, clock, publisher):
    publisher.publish([publisher.inline("beta")])
    crawling.domains.register(actor, publisher.domain)
    publisher.publish([])
    recrawl(job, clock)
    beta = agents(client)["Beta"]
    body = {"status": "deprecated", "statusMessage": "retired: use Beta 2"}
    assert client.patch(f"/v1/agents/{beta['id']}", json=body, headers=auth).status_code == 200
    publisher.publish([publisher.inline("beta")])
    recrawl(job, clock)
    assert agents(client)["Beta"]["statusMessage"] == "retired: use Beta 2"


def test_agents_registered_directly_are_never_deprecated_by_a_manifest(
    client, other_token, actor, crawling, job, clock, publisher
):
    direct = {"url": publisher.by_url("alpha")["url"]}
    mine = client.post("/v1/agents", json=direct, headers={"Authorization": f"Bearer {other_token}"})
    assert mine.status_code == 201
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")])
    crawling.domains.register(actor, publisher.domain)
    publisher.publish([])
    recrawl(job, clock)
    assert {name: a["status"] for name, a in agents(client).items()} == {"Alpha": "active", "Beta": "deprecated"}


def test_an_unchanged_manifest_answers_304_and_nothing_is_fetched_again(
    client, actor, crawling, job, clock, publisher, services
):
    publisher.publish([publisher.by_url("alpha")])
    crawling.domains.register(actor, publisher.domain)
    fetched = publisher.seen("/agents/alpha.json")
    recrawl(job, clock)
    last_path, headers = publisher.requests[-1]
    assert last_path == WELL_KNOWN and headers.get("If-None-Match")
    assert publisher.seen("/agents/alpha.json") == fetched
    row = source_row(services)
    assert (row.crawl_failures, row.crawl_error) == (0, None) and row.crawled_at == clock.now


def test_a_nested_catalog_that_is_down_deprecates_nothing(client, actor, crawling, job, clock, publisher):
    publisher.publish([publisher.by_url("alpha"), publisher.nested("team", [publisher.inline("gamma")])])
    crawling.domains.register(actor, publisher.domain)
    publisher.put_text("/catalogs/team.json", "maintenance", status=503)
    recrawl(job, clock)  # the manifest answers 304, but it has a nested catalog: it is read again
    assert agents(client)["Gamma"]["status"] == "active"
    publisher.publish([publisher.by_url("alpha")])  # now it is really gone
    recrawl(job, clock)
    assert agents(client)["Gamma"]["status"] == "deprecated"


def test_a_manifest_gone_from_every_location_deprecates_what_it_listed(
    client, actor, crawling, job, clock, publisher, services
):
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")])
    crawling.domains.register(actor, publisher.domain)
    publisher.remove(WELL_KNOWN)
    recrawl(job, clock)
    now = agents(client)
    assert {name: a["status"] for name, a in now.items()} == {"Alpha": "deprecated", "Beta": "deprecated"}
    assert publisher.domain in now["Alpha"]["statusMessage"] and "no ARD manifest" in now["Alpha"]["statusMessage"]
    assert source_row(services).crawl_failures == 1


def test_a_manifest_that_moved_is_followed_to_its_new_place(client, actor, crawling, job, clock, publisher, services):
    publisher.publish([publisher.by_url("alpha")])
    crawling.domains.register(actor, publisher.domain)
    publisher.remove(WELL_KNOWN)
    moved = publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")], path="/entries.json")
    publisher.put_text("/robots.txt", f"Agentmap: {moved}\n")
    recrawl(job, clock)
    assert {name: a["status"] for name, a in agents(client).items()} == {"Alpha": "active", "Beta": "active"}
    row = source_row(services)
    assert (row.manifest_url, row.found_via) == (moved, "agentmap")


def test_a_failing_manifest_changes_nothing_and_backs_off(client, actor, crawling, job, clock, publisher, services):
    publisher.publish([publisher.by_url("alpha")])
    crawling.domains.register(actor, publisher.domain)
    publisher.put_text(WELL_KNOWN, "overloaded", status=503)
    recrawl(job, clock)
    row = source_row(services)
    assert row.crawl_failures == 1 and "503" in row.crawl_error
    assert row.next_crawl_at >= clock.now + dt.timedelta(seconds=0.9 * 3600)
    assert agents(client)["Alpha"]["status"] == "active"


def test_an_agent_its_owner_deleted_is_not_brought_back_by_a_recrawl(
    client, auth, actor, crawling, job, clock, publisher
):
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta")])
    crawling.domains.register(actor, publisher.domain)
    beta = agents(client)["Beta"]
    assert client.delete(f"/v1/agents/{beta['id']}", headers=auth).status_code == 204
    publisher.publish([publisher.by_url("alpha"), publisher.inline("beta", version="2")])
    recrawl(job, clock)
    assert set(agents(client)) == {"Alpha"}
    report = crawling.domains.register(actor, publisher.domain).manifest  # asked for explicitly: back
    assert report is not None and [r["identifier"] for r in report.registered] == [publisher.urn("beta")]


def test_the_job_does_nothing_until_the_domain_is_due_again(actor, crawling, job, clock, publisher):
    publisher.publish([publisher.by_url("alpha")])
    crawling.domains.register(actor, publisher.domain)
    assert run_job(job).claimed == 0  # registered just now: due in an hour
    recrawl(job, clock)
    assert run_job(job).claimed == 0
