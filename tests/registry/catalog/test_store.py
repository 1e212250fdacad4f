"""New agents reach the database by one `CatalogStore.insert_new(batch)`: every row lands with its
own agent, a duplicate URL costs only its own item, and nothing half-written stays behind."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import func, select

from registry.audit import AuditEntry
from registry.catalog import Agent, AgentCard, AgentQuery, AgentTerm
from registry.catalog.store import NewAgent
from registry.errors import Conflict, InvalidCard, RegistryError
from tests.support.cards import make_card


def _new(services: Any, actor: Any, name: str, tags: list[str], url: str) -> NewAgent:
    catalog = services.catalog
    record = catalog._record(make_card(name, tags=tags), None, url, source="pushed", scope=None)
    columns = catalog._new_agent_columns(actor, record, None)
    return NewAgent(record, columns, catalog._audit(actor, "agent.register", columns["id"], {"cardUrl": url}))


def _count(services: Any, table: Any) -> int:
    with services.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(table)))


def test_each_agent_of_a_batch_gets_its_own_rows(services, actor):  # type: ignore[no-untyped-def]
    specs = [("Alpha Scout", ["alpha", "shared"]), ("Bravo Pilot", ["bravo", "shared"]), ("Charlie Guide", ["charlie"])]
    batch = [
        _new(services, actor, name, tags, f"https://{name.split()[0].lower()}.example/card.json")
        for name, tags in specs
    ]
    pks = services.search._store.insert_new(batch)
    assert len(set(pks)) == 3 and None not in pks
    with services.engine.connect() as conn:
        names = dict(conn.execute(select(Agent.pk, Agent.name)).all())
        tags = conn.execute(select(AgentTerm.agent_pk, AgentTerm.value).where(AgentTerm.kind == "tag")).all()
        cards = dict(conn.execute(select(AgentCard.agent_pk, AgentCard.version)).all())
    assert [names[pk] for pk in pks] == [name for name, _ in specs]
    assert sorted(tags) == sorted((pk, tag) for pk, (_, spec) in zip(pks, specs) for tag in spec)
    assert cards == {pk: 1 for pk in pks}
    assert _count(services, AuditEntry) == 3
    found = services.search.search(AgentQuery(tags=("shared",))).agents
    assert [row.pk for row in found] == pks[:2]
    services.catalog.fold_tag_counts()
    assert dict(services.search.tags()) == {"shared": 2, "alpha": 1, "bravo": 1, "charlie": 1}


def test_a_duplicate_url_in_a_batch_costs_only_its_own_item(services, actor):  # type: ignore[no-untyped-def]
    first = _new(services, actor, "First", ["dup"], "https://same.example/card.json")
    second = _new(services, actor, "Second", ["dup"], "https://same.example/card.json")
    other = _new(services, actor, "Other", ["solo"], "https://other.example/card.json")
    pks = services.search._store.insert_new([first, second, other])
    assert pks[0] is not None and pks[1] is None and pks[2] is not None
    assert _count(services, Agent) == 2 and _count(services, AgentCard) == 2
    with services.engine.connect() as conn:
        assert set(conn.scalars(select(AgentTerm.agent_pk).distinct())) == {pks[0], pks[2]}
    assert [row.pk for row in services.search.search(AgentQuery(tags=("dup",))).agents] == [pks[0]]


def test_terms_of_any_characters_are_stored_whole(services, actor):  # type: ignore[no-untyped-def]
    odd = ["\ue000x", "a,b", "{c}", 'd"e', "f\\g", "h;i"]
    [pk] = services.search._store.insert_new([_new(services, actor, "Odd Terms", odd, "https://odd.example/c.json")])
    with services.engine.connect() as conn:
        stored = set(conn.scalars(select(AgentTerm.value).where(AgentTerm.agent_pk == pk, AgentTerm.kind == "tag")))
    assert stored == set(odd)


def test_concurrent_registrations_each_get_their_own_outcome(services):  # type: ignore[no-untyped-def]
    actor = services.tokens.authenticate(services.tokens.create("alice", ["agents:write"]).token)
    broken = make_card("Broken")
    del broken["version"]
    requests = {f"agent-{i}": (make_card(f"Agent {i}"), f"https://a{i}.example/card.json") for i in range(8)}
    requests["twin-1"] = (make_card("Twin"), "https://twin.example/card.json")
    requests["twin-2"] = (make_card("Twin"), "https://twin.example/card.json")
    requests["broken"] = (broken, "https://broken.example/card.json")
    start = threading.Barrier(len(requests), timeout=5.0)
    outcomes: dict[str, Any] = {}

    def register(key: str) -> None:
        card, url = requests[key]
        start.wait()
        try:
            outcomes[key] = services.catalog.register_card(actor, card, url).agent.id
        except RegistryError as error:
            outcomes[key] = type(error)

    threads = [threading.Thread(target=register, args=(key,)) for key in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15.0)
    assert not any(thread.is_alive() for thread in threads), "a registration never returned"

    assert outcomes["broken"] is InvalidCard
    twins = [outcomes["twin-1"], outcomes["twin-2"]]
    assert twins.count(Conflict) == 1 and all(isinstance(t, str) or t is Conflict for t in twins)
    stored_ids = {outcome for outcome in outcomes.values() if isinstance(outcome, str)}
    assert len(stored_ids) == 9  # eight agents and one twin, each with its own id
    with services.sessions() as session:
        stored = dict(session.execute(select(Agent.id, Agent.card_url)).all())
    assert set(stored) == stored_ids
    assert sorted(stored.values()) == sorted(
        {url for _, url in requests.values()} - {"https://broken.example/card.json"}
    )
