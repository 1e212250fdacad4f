"""The listing seen whole (what the ARD manifest pages): its blocks hold exactly the agents the
default search lists, and its change marker moves with every change to that list, by any writer."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import update

from registry.catalog import Agent, AgentQuery, CatalogListing
from registry.container import Services
from tests.support.cards import make_card

DAY = 86_400.0


def _register(services: Services, actor: Any, count: int) -> list[str]:
    return [
        services.catalog.register_card(actor, make_card(f"Agent {n}"), f"https://l{n}.example.org/card.json").agent.id
        for n in range(count)
    ]


def _down_since(services: Services, agent_id: str, since: dt.datetime) -> None:
    """As the health checks leave an agent that stopped answering at `since`."""
    with services.engine.begin() as conn:
        conn.execute(update(Agent).where(Agent.id == agent_id).values(health_state="down", health_since=since))


def test_the_blocks_hold_exactly_what_the_default_search_lists(services: Services, actor: Any) -> None:
    ids = _register(services, actor, 8)
    services.catalog.update_status(actor, ids[1], "deprecated", None)
    _down_since(services, ids[4], dt.datetime.now(dt.UTC) - dt.timedelta(days=30))
    _down_since(services, ids[5], dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5))  # down, not yet hidden
    listing = CatalogListing(services.engine, hide_dead_after=3 * DAY)
    listed = services.search.search(AgentQuery(limit=100)).agents
    assert [row.id for row in listed] == [ids[n] for n in (0, 2, 3, 5, 6, 7)]
    blocks = listing.blocks(3)
    assert [(block.number, block.agents, block.pk_sum) for block in blocks] == [
        (number, len(rows), sum(rows))
        for number in (1, 2, 3)
        if (rows := [row.pk for row in listed if (row.pk - 1) // 3 + 1 == number])
    ]
    assert all(block.updated_at is not None for block in blocks)


def test_the_marker_moves_with_every_change_to_the_list(services: Services, actor: Any) -> None:
    now = [dt.datetime.now(dt.UTC)]
    listing = CatalogListing(services.engine, hide_dead_after=3 * DAY, clock=lambda: now[0])
    seen = [listing.change_marker()]

    def moved() -> bool:
        seen.append(listing.change_marker())
        return seen[-1] != seen[-2]

    first, second = _register(services, actor, 2)
    assert moved()  # registered
    services.catalog.update_status(actor, first, "deprecated", "old")
    assert moved()
    services.catalog.delete(actor, first)
    assert moved()
    _down_since(services, second, now[0])
    assert not moved()  # down, but listed until the cutoff passes it
    now[0] += dt.timedelta(days=4)
    assert moved()  # now hidden as dead, without any write
    with services.engine.begin() as conn:  # a health check that finds it as it was
        conn.execute(update(Agent).where(Agent.id == second).values(health_checked_at=now[0]))
    assert not moved()
