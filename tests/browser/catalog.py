"""The small catalog the browser tests look at, written through the services as the API would:
a signed agent, one whose health was probed for two hours (so its chart has marks), one with two
versions, a hostile one, and a page and a bit of look-alikes. Each agent's name says what it is there for."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

from sqlalchemy import update

from registry.container import Services
from registry.health import HealthPolicy, HealthProbe, HealthService
from registry.schema import Agent, AgentCard
from signing import generate_key, public_jwks, sign_card
from tests.support.a2a_agents import LOOPBACK_DEADLINE, TASK_NOT_FOUND, PlainAgent, raw, slow
from tests.support.cards import make_card
from tests.support.jobs import FakeClock

EVIL_NAME = "<script>alert(1)</script>"
EVIL_SKILL = '"><img src=x onerror=alert(1)>'
EVIL_DOCS = "javascript:alert(1)"
PROBES = 24  # one every five minutes: two hours of checks
PROBE_GAP = 300.0
BULK = 21  # agents tagged "bulk": one more than a page of results


@dataclasses.dataclass(frozen=True)
class Seeded:
    """Ids of the seeded agents, by what each is there to show."""

    signed: str  # "Currency Converter": signed with a key its owner registered (verified)
    stocks: str  # "Stock Quotes": the other finance agent, streaming
    probed: str  # "Weather Forecaster": 24 health checks, some down, some slow
    versioned: str  # "Travel Planner": two versions of its card
    translator: str  # "Polyglot Translator"
    evil: str  # script in its name, an <img onerror> in a skill, a javascript: documentation URL
    # and BULK agents tagged "bulk", named "Bulk Agent 01" …, to page through


def seed(services: Services, health_agent: PlainAgent) -> Seeded:
    actor = services.tokens.authenticate(services.tokens.create("alice", ["agents:write"]).token)
    register = services.catalog.register_card

    key = generate_key("EdDSA")
    services.trust.register_keys(actor, public_jwks([key]), None)
    currency = make_card("Currency Converter", tags=["finance", "currency"], description="Converts currency amounts")
    signed = register(actor, sign_card(currency, key), "https://fx.example.com/.well-known/agent-card.json")

    stocks = make_card("Stock Quotes", tags=["finance", "stocks"], streaming=True, description="Live stock prices")
    weather = make_card(
        "Weather Forecaster", tags=["weather"], url=health_agent.rpc_url, description="Forecasts the weather anywhere"
    )
    forecast = {"name": "Forecast", "description": "Hourly and daily forecasts for any city"}
    weather["skills"][0].update(forecast, examples=["Will it rain in Lisbon tomorrow?"])
    translator = make_card("Polyglot Translator", tags=["language"], description="Translates text between languages")
    travel = make_card("Travel Planner", tags=["travel"], description="Plans trips")
    ids = {
        "stocks": register(actor, stocks, "https://stocks.example.com/.well-known/agent-card.json").agent.id,
        "probed": register(actor, weather, f"{health_agent.base_url}/.well-known/agent-card.json").agent.id,
        "translator": register(actor, translator, "https://words.example.org/.well-known/agent-card.json").agent.id,
        "versioned": register(actor, travel, "https://trips.example.net/.well-known/agent-card.json").agent.id,
    }
    travel_v2 = make_card("Travel Planner", tags=["travel", "hotels"], skills=2, description="Plans trips and hotels")
    services.catalog.replace_card(actor, ids["versioned"], travel_v2)
    _probe_for_two_hours(services, ids["probed"], health_agent)
    bulk = [make_card(f"Bulk Agent {n:02}", tags=["bulk"], description="One of many") for n in range(1, BULK + 1)]
    services.catalog.import_cards(
        actor,
        [{"card": card, "cardUrl": f"https://bulk{n}.example.com/agent-card.json"} for n, card in enumerate(bulk)],
    )
    return Seeded(signed=signed.agent.id, evil=_register_hostile(services, actor), **ids)


def _probe_for_two_hours(services: Services, agent_id: str, agent: PlainAgent) -> None:
    """Real probes of a loopback agent, on a clock moved by hand so the checks span two hours
    ending now: up, a slow stretch, down for a while, up again."""
    clock = FakeClock(dt.datetime.now(dt.UTC) - dt.timedelta(seconds=PROBES * PROBE_GAP))
    probe = HealthProbe(services.http, timeout=LOOPBACK_DEADLINE, slow_after=LOOPBACK_DEADLINE, clock=clock)
    policy = HealthPolicy(interval=PROBE_GAP, failures_before_down=2, successes_before_up=1, max_backoff=3600)
    health = HealthService(services.engine, probe, policy, clock=clock)
    for index in range(PROBES):
        agent.behaviour = _behaviour_at(index)
        health.check_now(agent_id)
        clock.advance(PROBE_GAP)
    agent.behaviour = TASK_NOT_FOUND


def _behaviour_at(index: int) -> Any:
    if 8 <= index < 11:
        return slow(0.03 * (index - 7), TASK_NOT_FOUND)  # latencies of 30-90 ms on the chart
    if 14 <= index < 18:
        return raw(503, b"down for maintenance", "text/plain")
    return TASK_NOT_FOUND


def _register_hostile(services: Services, actor: Any) -> str:
    """A card whose text is markup. Its `javascript:` documentation URL is refused by validation,
    so it is registered with an https one and then rewritten in the database, as a card stored
    under older, laxer rules would be: the pages must be safe whatever the store holds."""
    card = make_card(EVIL_NAME, tags=["hostile"], description=f"Click {EVIL_SKILL} now")
    card["skills"][0]["name"] = EVIL_SKILL
    card["skills"][0]["examples"] = [EVIL_SKILL]
    card["documentationUrl"] = "https://evil.example.com/docs"
    agent = services.catalog.register_card(actor, card, "https://evil.example.com/.well-known/agent-card.json").agent
    card["documentationUrl"] = EVIL_DOCS
    with services.engine.begin() as conn:
        pk = conn.scalar(
            update(Agent).where(Agent.id == agent.id).values(documentation_url=EVIL_DOCS).returning(Agent.pk)
        )
        conn.execute(update(AgentCard).where(AgentCard.agent_pk == pk).values(raw=json.dumps(card).encode()))
    return agent.id
