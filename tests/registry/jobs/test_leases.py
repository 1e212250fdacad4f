"""Leases on SQLite and PostgreSQL: due rows only, one owner at a time, expiry, fencing, and on
PostgreSQL `SKIP LOCKED` so that a second claimer passes over rows another one is taking."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, update

from registry.health.service import PROBE_LEASE
from registry.schema import Agent
from tests.support.cards import make_card
from tests.support.jobs import START


@pytest.fixture
def pks(services, writer_token) -> list[int]:  # type: ignore[no-untyped-def]
    actor = services.tokens.authenticate(writer_token)
    ids = [
        services.catalog.register_card(actor, make_card(f"Agent {i}"), f"https://a{i}.example/card.json").agent.id
        for i in range(6)
    ]
    with services.engine.begin() as conn:
        for minutes, agent_id in enumerate(ids):  # due one minute apart, the last one an hour ahead
            due = START + dt.timedelta(minutes=minutes - 4 if minutes < 5 else 60)
            conn.execute(update(Agent).where(Agent.id == agent_id).values(next_probe_at=due))
        return [conn.scalar(select(Agent.pk).where(Agent.id == agent_id)) for agent_id in ids]


def claim(services, owner: str, now: dt.datetime = START, limit: int = 10) -> list[int]:  # type: ignore[no-untyped-def]
    with services.engine.begin() as conn:
        return [row.pk for row in PROBE_LEASE.claim(conn, owner=owner, now=now, seconds=60, limit=limit)]


def test_claims_take_due_rows_earliest_first_up_to_the_limit(services, pks):
    assert claim(services, "a", limit=2) == pks[:2]
    assert sorted(claim(services, "b")) == pks[2:5]  # the sixth is not due yet
    assert claim(services, "c") == []


def test_a_lease_is_exclusive_until_it_expires(services, pks):
    assert len(claim(services, "a")) == 5
    assert claim(services, "b", START + dt.timedelta(seconds=59)) == []
    assert len(claim(services, "b", START + dt.timedelta(seconds=60))) == 5


def test_hold_fences_out_an_owner_whose_lease_passed_to_another(services, pks):
    claim(services, "a")
    later = START + dt.timedelta(seconds=61)
    claim(services, "b", later)
    with services.engine.begin() as conn:
        assert PROBE_LEASE.hold(conn, pks, owner="a", now=later, seconds=60) == {}
        assert sorted(PROBE_LEASE.hold(conn, pks, owner="b", now=later, seconds=60)) == pks[:5]


def test_claim_key_takes_one_row_whether_due_or_not_unless_leased(services, pks):
    with services.engine.begin() as conn:
        assert PROBE_LEASE.claim_key(conn, pks[5], owner="a", now=START, seconds=60) is not None
        assert PROBE_LEASE.claim_key(conn, pks[5], owner="b", now=START, seconds=60) is None


def test_postgresql_claimers_skip_rows_locked_by_an_open_claim(services, pks):
    if services.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: the second claim waits instead of skipping")
    with services.engine.connect() as first, services.engine.connect() as second:
        with first.begin():
            taken = [row.pk for row in PROBE_LEASE.claim(first, owner="a", now=START, seconds=60, limit=2)]
            with second.begin():  # does not wait for `first` to commit
                other = [row.pk for row in PROBE_LEASE.claim(second, owner="b", now=START, seconds=60, limit=10)]
    assert taken == pks[:2] and sorted(other) == pks[2:5]
