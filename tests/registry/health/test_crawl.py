"""Re-crawling: conditional re-fetches on the agent's own schedule, new versions for changed cards,
invalid cards kept as history without replacing the valid one, back-off on failures."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from registry.catalog import AgentQuery, CardFetcher, CatalogService
from registry.container import catalog_store
from registry.health import CrawlPolicy, CrawlService
from registry.jobs import LeasedJob
from registry.schema import Agent
from registry.trust import NoTrust
from tests.support.a2a_agents import SdkAgent
from tests.support.cards import make_card, with_changes
from tests.support.jobs import FakeClock, run_job

CARD = "/.well-known/agent-card.json"
POLICY = CrawlPolicy(interval=3600, min_interval=300, max_interval=86_400, jitter=0.1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def crawler(services, clock) -> CrawlService:  # type: ignore[no-untyped-def]
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes, clock=clock)
    catalog = CatalogService(catalog_store(services.engine), fetcher, services.limits, NoTrust(), clock=clock)
    return CrawlService(services.engine, fetcher, catalog, POLICY, lease_seconds=120, clock=clock, rng=random.Random(3))


@pytest.fixture
def job(crawler) -> LeasedJob:  # type: ignore[no-untyped-def]
    return LeasedJob("recrawl", 5, crawler, batch=4)


@pytest.fixture
def sdk_agent() -> Iterator[SdkAgent]:
    agent = SdkAgent(cache_control="public, max-age=7200")
    yield agent
    agent.stop()


def schedule(services, agent_id: str):  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return conn.execute(
            select(
                Agent.next_crawl_at,
                Agent.crawled_at,
                Agent.crawl_failures,
                Agent.crawl_error,
                Agent.crawl_etag,
                Agent.name,
                Agent.card_version,
            ).where(Agent.id == agent_id)
        ).one()


def due_in(services, agent_id: str, clock: FakeClock) -> float:  # type: ignore[no-untyped-def]
    return (schedule(services, agent_id).next_crawl_at - clock.now).total_seconds()


def test_an_unchanged_real_agent_answers_304_and_is_next_crawled_after_its_max_age(
    services, job, clock, actor, sdk_agent
):
    agent_id = services.catalog.register_from_url(actor, sdk_agent.base_url).agent.id
    first, second = run_job(job), run_job(job)
    assert (first.claimed, first.recorded, second.claimed) == (1, 1, 0)
    row = schedule(services, agent_id)
    assert row.card_version == 1 and row.crawl_failures == 0 and row.crawled_at == clock.now
    assert row.crawl_etag and row.crawl_etag.startswith('W/"')  # the SDK's validator, sent back next time
    assert 7200 * 0.9 <= due_in(services, agent_id, clock) <= 7200 * 1.1
    assert len(services.search.versions(agent_id)) == 1


def test_a_changed_card_becomes_the_current_version_and_the_index_follows(services, job, clock, actor, card_server):
    card = make_card("Weather Agent", tags=["weather"])
    card_server.serve_json(CARD, card, headers={"ETag": '"v1"'})
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    changed = with_changes(card, name="Weather Agent Pro")
    changed["skills"][0]["tags"] = ["weather", "radar"]
    card_server.serve_json(CARD, changed, headers={"ETag": '"v2"', "Cache-Control": "max-age=60"})

    assert run_job(job).recorded == 1
    assert card_server.requests[-1][1].get("If-None-Match") == '"v1"'
    row = schedule(services, agent_id)
    assert (row.name, row.card_version, row.crawl_etag) == ("Weather Agent Pro", 2, '"v2"')
    assert 300 * 0.9 <= due_in(services, agent_id, clock) <= 300 * 1.1  # max-age 60 is below the floor
    assert [a.id for a in services.search.search(AgentQuery(tags=("radar",))).agents] == [agent_id]
    newest = services.search.versions(agent_id)[0]
    assert newest["isCurrent"] and newest["source"] == "crawled"
    assert "/name" in newest["changes"]["changed"]


def test_an_invalid_card_is_kept_with_its_issues_but_does_not_replace_the_valid_one(
    services, job, clock, actor, card_server
):
    card = make_card("Weather Agent", tags=["weather"])
    card_server.serve_json(CARD, card)
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    broken = {k: v for k, v in card.items() if k != "skills"} | {"supportedInterfaces": "nowhere"}
    card_server.serve_json(CARD, broken)

    run_job(job)
    clock.advance(POLICY.max_interval * 1.2)
    run_job(job)  # the same broken card again: recorded once, not twice

    versions = services.search.versions(agent_id)
    assert [(v["version"], v["isCurrent"], v["valid"]) for v in versions] == [(2, False, False), (1, True, True)]
    assert versions[0]["issues"] and all(
        {"path", "rule", "severity", "message"} <= set(i) for i in versions[0]["issues"]
    )
    assert schedule(services, agent_id).card_version == 1
    assert json.loads(services.search.card(agent_id).raw)["skills"]  # the valid card is still served


def test_a_valid_card_after_an_invalid_one_takes_the_next_version(services, job, clock, actor, card_server):
    card = make_card("Weather Agent")
    card_server.serve_json(CARD, card)
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    card_server.serve_json(CARD, {"name": "broken"})
    run_job(job)
    card_server.serve_json(CARD, with_changes(card, description="Fixed"))
    clock.advance(POLICY.max_interval * 1.2)
    run_job(job)
    versions = services.search.versions(agent_id)
    assert [(v["version"], v["isCurrent"], v["valid"]) for v in versions] == [
        (3, True, True),
        (2, False, False),
        (1, False, True),
    ]
    assert schedule(services, agent_id).card_version == 3


def test_failed_fetches_back_off_and_a_recovery_resets_them(services, job, clock, actor, card_server):
    card = make_card("Flaky Agent")
    card_server.serve_json(CARD, card)
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    card_server.serve_raw(CARD, b"oops", status=503, headers={"Content-Type": "text/plain"})
    gaps = []
    for _ in range(3):
        run_job(job)
        gaps.append(round(due_in(services, agent_id, clock) / POLICY.interval))
        clock.advance(due_in(services, agent_id, clock))
    row = schedule(services, agent_id)
    assert gaps == [1, 2, 4] and row.crawl_failures == 3 and "503" in row.crawl_error
    card_server.serve_json(CARD, card)
    run_job(job)
    row = schedule(services, agent_id)
    assert (row.crawl_failures, row.crawl_error, row.card_version) == (0, None, 1)
    assert POLICY.interval * 0.9 <= due_in(services, agent_id, clock) <= POLICY.interval * 1.1


def test_pushed_cards_are_left_to_their_pipeline(services, job, clock, actor):
    agent_id = services.catalog.register_card(actor, make_card("Pushed"), "https://pushed.example/card.json").agent.id
    first, second = run_job(job), run_job(job)
    assert (first.claimed, first.recorded, second.claimed) == (1, 1, 0)  # put off, never fetched
    row = schedule(services, agent_id)
    assert (row.crawled_at, row.crawl_failures, row.crawl_error, row.card_version) == (None, 0, None, 1)
    assert POLICY.max_interval * 0.9 <= due_in(services, agent_id, clock) <= POLICY.max_interval * 1.1


@pytest.mark.parametrize(
    ("cache_control", "expected"),
    [
        ("max-age=7200", 7200),
        ("max-age=5", 300),
        ("max-age=99999999", 86_400),
        ("no-cache", 300),
        (None, 3600),
    ],
)
def test_max_age_is_honoured_within_the_operator_bounds(cache_control, expected):
    from registry.catalog.fetcher import parse_max_age

    assert POLICY.delay(parse_max_age(cache_control)) == expected


def test_a_crashed_crawler_lease_expires(services, crawler, job, clock, actor, card_server):
    card_server.serve_json(CARD, make_card("Agent"))
    services.catalog.register_from_url(actor, card_server.base_url)
    assert len(crawler.claim("crashed", 10)) == 1
    assert run_job(job).claimed == 0
    clock.advance(121)
    assert run_job(job).recorded == 1
