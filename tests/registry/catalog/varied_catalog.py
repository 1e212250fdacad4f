"""A small catalog whose agents differ in every way a filter or a facet looks at: hosts (an IPv6
literal and a port among them), tags, modes, capabilities, protocol versions, health, status; one
deprecated agent and one hidden as dead."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sqlalchemy import update

from registry.catalog import Agent, AgentQuery
from tests.support.cards import make_card, make_v03_card


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    url: str
    tags: list[str]
    health: str = "unknown"
    streaming: bool = False
    push: bool = False
    legacy: bool = False  # a v0.3 card
    inputs: list[str] | None = None


SPECS = [
    Spec("Alpha Weather", "https://alpha.example.com/.well-known/agent-card.json", ["weather", "red"], "up", True),
    Spec("Beta Weather", "https://beta.example.com/a/card.json", ["weather", "blue"], "degraded"),
    Spec("Gamma Maps", "https://alpha.example.com/maps/card.json", ["maps", "red"], "down", push=True),
    Spec("Delta Maps", "https://[2001:db8::1]/card.json", ["maps", "blue"]),
    Spec("Legacy Weather", "https://legacy.example.org:8443/card.json", ["weather"], legacy=True),
    Spec("Epsilon Travel", "https://epsilon.example.net/card.json", ["travel", "green"], "up", inputs=["image/png"]),
    Spec("Zeta Travel", "https://zeta.example.net/card.json", ["travel", "red"], "up"),  # deprecated
    Spec("Eta Weather", "https://eta.example.com/card.json", ["weather", "green"], "down"),  # dead
]
DEPRECATED, DEAD = "Zeta Travel", "Eta Weather"
LISTED = [spec.name for spec in SPECS if spec.name not in (DEPRECATED, DEAD)]  # by a default search


def card(spec: Spec) -> dict[str, Any]:
    if spec.legacy:
        return make_v03_card(spec.name, tags=spec.tags)
    made = make_card(spec.name, tags=spec.tags, streaming=spec.streaming, push=spec.push)
    made["description"] = f"{spec.name} agent for {' and '.join(spec.tags)}"
    if spec.inputs:
        made["defaultInputModes"] = spec.inputs
    return made


def register_varied(services, actor) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Agent ids by name, registered in the order of SPECS."""
    ids = {spec.name: services.catalog.register_card(actor, card(spec), spec.url).agent.id for spec in SPECS}
    now = dt.datetime.now(dt.UTC)
    with services.engine.begin() as conn:
        for spec in SPECS:
            since = now - dt.timedelta(days=30 if spec.name == DEAD else 1)
            values = {"health_state": spec.health, "health_since": since}
            conn.execute(update(Agent).where(Agent.id == ids[spec.name]).values(**values))
    services.catalog.update_status(actor, ids[DEPRECATED], "deprecated", "replaced")
    return ids


def every_page(services, query: AgentQuery) -> list[str]:  # type: ignore[no-untyped-def]
    """Ids of every agent the query finds, page after page."""
    found, cursor = [], None
    while True:
        page = services.search.search(dataclasses.replace(query, cursor=cursor))
        found.extend(row.id for row in page.agents)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
