"""Re-crawled cards go through the same verification: a changed card's new version gets its own
checks; an unchanged card's state follows its keys (a JWKS that answers again); and under
AGENTDEX_REQUIRE_SIGNATURES a re-crawled card without a valid signature never becomes current."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest

from registry.catalog import CardFetcher, CatalogService
from registry.catalog.presenters import agent_json
from registry.container import Services, build_services, catalog_store
from registry.health import CrawlPolicy, CrawlService
from registry.jobs import LeasedJob
from registry.settings import Settings
from signing import SigningKey, generate_key, public_jwks, sign_card
from tests.conftest import _clear
from tests.support.cards import make_card
from tests.support.jobs import FakeClock, run_job
from tests.support.servers import CardServer

CARD = "/.well-known/agent-card.json"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # JWKS failures are retried after a minute in production; here at once, so one test can
    # watch an endpoint come back.
    return dataclasses.replace(settings, trust=dataclasses.replace(settings.trust, jwks_min_refresh=0.001))


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key("ES256")


def crawl_job(services: Services, clock: FakeClock) -> LeasedJob:
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes, clock=clock)
    catalog = CatalogService(catalog_store(services.engine), fetcher, services.limits, services.trust, clock=clock)
    crawler = CrawlService(
        services.engine, fetcher, catalog, CrawlPolicy(jitter=0.0), lease_seconds=120, clock=clock, rng=random.Random(1)
    )
    return LeasedJob("recrawl", 5, crawler, batch=4)


def recrawl(services: Services, clock: FakeClock) -> None:
    clock.advance(2 * 3600)
    report = run_job(crawl_job(services, clock))
    assert report.recorded == 1


def shown(services: Services, agent_id: str) -> dict[str, Any]:
    """The agent's fields as the API shows them (not its card's profile)."""
    return agent_json(services.search.get(agent_id))


def signature(services: Services, agent_id: str) -> dict[str, Any]:
    return services.trust_reads.report(agent_id, None)


def test_recrawled_versions_are_verified_and_unchanged_cards_follow_their_keys(
    services: Services, writer_token: str, card_server: CardServer, key: SigningKey
) -> None:
    actor = services.tokens.authenticate(writer_token)
    jwks = card_server.serve_raw("/jwks.json", b"down", status=503)
    card_server.serve_json(CARD, sign_card(make_card("A"), key, jku=jwks))
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    assert signature(services, agent_id)["state"] == "unverifiable"

    clock = FakeClock()
    card_server.serve_json("/jwks.json", public_jwks([key]))
    recrawl(services, clock)  # same card; its JWKS answers now
    assert signature(services, agent_id)["state"] == "verified"
    assert shown(services, agent_id)["signature"]["state"] == "verified"

    card_server.serve_json(CARD, {**sign_card(make_card("A"), key, jku=jwks), "description": "changed later"})
    recrawl(services, clock)  # a new version, modified after signing
    report = signature(services, agent_id)
    assert (report["version"], report["state"], report["signatures"][0]["outcome"]) == (2, "invalid", "invalid")
    assert services.trust_reads.report(agent_id, 1)["state"] == "verified"


def test_a_card_that_answers_304_is_verified_again(
    services: Services, writer_token: str, card_server: CardServer, key: SigningKey
) -> None:
    actor = services.tokens.authenticate(writer_token)
    jwks = card_server.serve_raw("/jwks.json", b"down", status=503)
    card_server.serve_json(CARD, sign_card(make_card("A"), key, jku=jwks), headers={"ETag": '"v1"'})
    agent_id = services.catalog.register_from_url(actor, card_server.base_url).agent.id
    assert signature(services, agent_id)["state"] == "unverifiable"

    clock = FakeClock()
    card_server.serve_raw(CARD, b"", status=304, headers={"ETag": '"v1"'})
    card_server.serve_json("/jwks.json", public_jwks([key]))
    recrawl(services, clock)  # 304: the same card, and its JWKS answers now
    assert any(path == CARD and headers.get("If-None-Match") == '"v1"' for path, headers in card_server.requests)
    report = signature(services, agent_id)
    assert (report["version"], report["state"]) == (1, "verified")
    assert shown(services, agent_id)["signature"]["state"] == "verified"


@pytest.fixture
def strict(settings: Settings) -> Iterator[Services]:
    services = build_services(
        dataclasses.replace(settings, trust=dataclasses.replace(settings.trust, require_signatures=True))
    )
    _clear(services)
    yield services
    services.close()


def test_under_required_signatures_an_unsigned_recrawl_stays_history(
    strict: Services, card_server: CardServer, key: SigningKey
) -> None:
    actor = strict.tokens.authenticate(strict.tokens.create("erin", ["agents:write"]).token)
    jwks = card_server.serve_json("/jwks.json", public_jwks([key]))
    card_server.serve_json(CARD, sign_card(make_card("A"), key, jku=jwks))
    agent_id = strict.catalog.register_from_url(actor, card_server.base_url).agent.id
    card_server.serve_json(CARD, make_card("A, unsigned now"))
    recrawl(strict, FakeClock())
    agent = shown(strict, agent_id)
    assert (agent["cardVersion"], agent["signature"]["state"]) == (1, "verified")
    versions = strict.search.versions(agent_id)
    assert [(v["version"], v["isCurrent"]) for v in versions] == [(2, False), (1, True)]
    assert strict.trust_reads.report(agent_id, 2)["state"] == "unsigned"
