"""The host term: every agent is findable by its card URL's host (lower-cased, without port, an
IPv6 literal as its text), however it was written (registration, import, new card, re-crawl), and
agents stored before the term existed are given theirs by `agentdex search reindex`."""

from __future__ import annotations

import random

from sqlalchemy import delete, select

from registry.catalog import AgentQuery, AgentTerm, CardFetcher, CatalogService
from registry.container import catalog_store
from registry.health import CrawlPolicy, CrawlService
from registry.jobs import LeasedJob
from registry.schema import Agent
from registry.trust import NoTrust
from tests.support.cards import make_card, with_changes
from tests.support.jobs import FakeClock, run_job


def hosts(services) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Each agent's host terms, by agent name."""
    statement = (
        select(Agent.name, AgentTerm.value)
        .join(AgentTerm, (AgentTerm.agent_pk == Agent.pk) & (AgentTerm.kind == "host"))
        .order_by(Agent.name)
    )
    found: dict[str, list[str]] = {}
    with services.engine.connect() as conn:
        for name, value in conn.execute(statement):
            found.setdefault(name, []).append(value)
    return found


def test_registered_and_imported_agents_carry_their_host(services, actor):
    services.catalog.register_card(actor, make_card("Upper"), "https://Agents.EXAMPLE.com:8443/a/card.json")
    services.catalog.register_card(actor, make_card("Six"), "https://[2001:DB8::7]:9000/card.json")
    outcomes = services.catalog.import_cards(
        actor,
        [
            {"card": make_card("Imported"), "cardUrl": "https://imported.example.org/.well-known/agent-card.json"},
            {"card": make_card("Private"), "cardUrl": "http://10.0.0.5:8080/card.json"},
        ],
    )
    assert all(outcome.error is None for outcome in outcomes)
    assert hosts(services) == {
        "Imported": ["imported.example.org"],
        "Private": ["10.0.0.5"],
        "Six": ["2001:db8::7"],
        "Upper": ["agents.example.com"],
    }
    found = services.search.search(AgentQuery(any_of=(("host", ("[2001:db8::7]", "10.0.0.5")),))).agents
    assert sorted(row.card_url for row in found) == [
        "http://10.0.0.5:8080/card.json",
        "https://[2001:db8::7]:9000/card.json",
    ]


def test_a_new_card_and_a_re_crawl_keep_the_host(services, actor, card_server):
    pushed = services.catalog.register_card(actor, make_card("Pushed"), "https://pushed.example.com/card.json")
    assert services.catalog.replace_card(actor, pushed.agent.id, with_changes(make_card("Pushed"), version="2.0.0"))

    card = make_card("Crawled", tags=["weather"])
    card_server.serve_json("/.well-known/agent-card.json", card)
    clock = FakeClock()
    fetcher = CardFetcher(services.http, max_card_bytes=services.settings.max_card_bytes, clock=clock)
    catalog = CatalogService(catalog_store(services.engine), fetcher, services.limits, NoTrust(), clock=clock)
    crawled = catalog.register_from_url(actor, card_server.base_url).agent.id
    card_server.serve_json("/.well-known/agent-card.json", with_changes(card, name="Crawled Again"))
    policy = CrawlPolicy(interval=3600, min_interval=300, max_interval=86_400, jitter=0.1)
    crawler = CrawlService(
        services.engine, fetcher, catalog, policy, lease_seconds=120, clock=clock, rng=random.Random(1)
    )
    assert run_job(LeasedJob("recrawl", 5, crawler, batch=4)).recorded == 2

    assert services.search.get(crawled).card_version == 2
    assert hosts(services) == {"Crawled Again": ["127.0.0.1"], "Pushed": ["pushed.example.com"]}


def test_reindex_gives_agents_stored_before_the_host_term_theirs(services, actor):
    for n in range(7):
        services.catalog.register_card(actor, make_card(f"Agent {n}"), f"https://host{n % 3}.example.com/{n}/card.json")
    with services.engine.begin() as conn:  # as stored by a version that kept no host term
        conn.execute(delete(AgentTerm).where(AgentTerm.kind == "host"))
    assert hosts(services) == {}
    assert services.search.search(AgentQuery(any_of=(("host", ("host1.example.com",)),))).agents == []

    done: list[int] = []
    assert services.search.reindex(progress=done.append) == 7
    assert done and done[-1] == 7
    assert hosts(services) == {f"Agent {n}": [f"host{n % 3}.example.com"] for n in range(7)}
    found = services.search.search(AgentQuery(any_of=(("host", ("host1.example.com",)),))).agents
    assert [row.card_url for row in found] == [
        "https://host1.example.com/1/card.json",
        "https://host1.example.com/4/card.json",
    ]
    assert services.search.reindex() == 0  # nothing left to do
