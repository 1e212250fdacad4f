"""A batch of new agents written together (a group commit, an import): every row lands with its
own agent, and a batch that fails leaves nothing behind. On PostgreSQL the batch is one statement
per `STATEMENT_AGENTS` agents."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from registry.errors import Conflict, InvalidCard, RegistryError
from registry.schema import Agent, AgentCard, AgentTerm, AuditEntry
from registry.catalog.index import AUDIT_INSERT
from registry.catalog.search import AgentQuery
from tests.support.cards import make_card


def _prepared(services: Any, actor: Any, name: str, tags: list[str], url: str, signature: bool = False) -> Any:
    catalog = services.catalog
    record = catalog._import_record({"card": make_card(name, tags=tags), "cardUrl": url}, None)
    columns = catalog._new_agent_columns(actor, record)
    if signature:  # a verified registration gives these too: another column set, another group
        columns.update(signature_state="unsigned", signature_kids=[], signature_checked_at=dt.datetime.now(dt.UTC))
    return catalog._writer.prepare(record, columns), columns["id"]


def _audit(services: Any, actor: Any, agent_id: str) -> Any:
    row = services.catalog._audit_row(actor, "agent.register", agent_id, {"batch": True})
    return AUDIT_INSERT.prepare(services.engine.dialect, [row])[0]


def test_each_agent_of_a_batch_gets_its_own_rows(services, actor):  # type: ignore[no-untyped-def]
    specs = [("Alpha Scout", ["alpha", "shared"], False), ("Bravo Pilot", ["bravo", "shared"], True),
             ("Charlie Guide", ["charlie"], False)]
    prepared = [_prepared(services, actor, name, tags, f"https://{name.split()[0].lower()}.example/card.json", signed)
                for name, tags, signed in specs]
    with services.engine.begin() as conn:
        pks = services.catalog._writer.insert_agents(conn, [new for new, _ in prepared],
                                                     audit=[_audit(services, actor, agent_id) for _, agent_id in prepared])

    with services.sessions() as session:
        ids = dict(session.execute(select(Agent.pk, Agent.id)).all())
        assert [ids[pk] for pk in pks] == [agent_id for _, agent_id in prepared]
        for pk, (name, tags, signed) in zip(pks, specs):
            agent = session.get(Agent, pk)
            assert agent.name == name and agent.tags == sorted(tags)
            assert agent.signature_state == ("unsigned" if signed else "unverifiable")  # else the column's default
            assert session.scalars(select(AgentTerm.value).where(AgentTerm.agent_pk == pk, AgentTerm.kind == "tag")).all() == sorted(tags)
            card = session.execute(select(AgentCard.version, AgentCard.sha256).where(AgentCard.agent_pk == pk)).one()
            assert card == (1, agent.card_sha256)
        logged = session.scalars(select(AuditEntry.agent_id).where(AuditEntry.action == "agent.register")).all()
    assert sorted(logged) == sorted(agent_id for _, agent_id in prepared)
    for word, (_, agent_id) in zip(("scout", "pilot", "guide"), prepared):  # each agent's text is its own
        assert [row.id for row in services.discovery.search(AgentQuery(text=word)).agents] == [agent_id]
    with services.engine.connect() as conn:
        counts = dict(services.catalog.tag_counts.read(conn, limit=10))
    assert counts == {"shared": 2, "alpha": 1, "bravo": 1, "charlie": 1}


def test_a_batch_with_a_duplicate_url_fails_whole_and_leaves_nothing(services, actor):  # type: ignore[no-untyped-def]
    first, _ = _prepared(services, actor, "Twin One", ["twin"], "https://twin.example/card.json")
    second, _ = _prepared(services, actor, "Twin Two", ["twin"], "https://twin.example/card.json")
    with pytest.raises(IntegrityError):
        with services.engine.begin() as conn:
            services.catalog._writer.insert_agents(conn, [first, second])
    with services.engine.connect() as conn:
        for table in ("agents", "agent_cards", "agent_terms", "tag_count_deltas", "audit_log"):
            assert conn.scalar(select(func.count()).select_from(text(table))) == 0, table


def test_a_batch_over_several_statements_keeps_each_agents_rows_and_stands_or_falls_whole(services, actor, monkeypatch):  # type: ignore[no-untyped-def]
    # On PostgreSQL a batch is written STATEMENT_AGENTS agents a statement, in one transaction.
    monkeypatch.setattr("registry.catalog.index.STATEMENT_AGENTS", 2)
    names = ["Delta Ranger", "Echo Keeper", "Foxtrot Finder", "Golf Tracker", "Hotel Porter"]
    prepared = [_prepared(services, actor, name, [name.split()[0].lower(), "five"], f"https://{name.split()[0].lower()}.example/c.json",
                          signature=n == 3) for n, name in enumerate(names)]
    with services.engine.begin() as conn:
        pks = services.catalog._writer.insert_agents(conn, [new for new, _ in prepared], audit=[_audit(services, actor, "batch")])
    with services.sessions() as session:
        assert [session.get(Agent, pk).id for pk in pks] == [agent_id for _, agent_id in prepared]
        for pk, name in zip(pks, names):
            tags = session.scalars(select(AgentTerm.value).where(AgentTerm.agent_pk == pk, AgentTerm.kind == "tag")).all()
            assert tags == sorted([name.split()[0].lower(), "five"])
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == 1
    for name, (_, agent_id) in zip(names, prepared):
        assert [row.id for row in services.discovery.search(AgentQuery(text=name.split()[1])).agents] == [agent_id]

    # A duplicate URL in the batch's last statement takes the statements before it back too.
    more = [_prepared(services, actor, f"India {n}", ["india"], f"https://india{n}.example/c.json")[0] for n in range(4)]
    more.append(_prepared(services, actor, "India Twin", ["india"], "https://india0.example/c.json")[0])
    with pytest.raises(IntegrityError):
        with services.engine.begin() as conn:
            services.catalog._writer.insert_agents(conn, more)
    with services.engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Agent)) == len(names)
        assert conn.scalar(select(func.count()).select_from(AgentTerm).where(AgentTerm.value == "india")) == 0


def test_terms_holding_the_separator_characters_are_stored_whole(services, actor):  # type: ignore[no-untyped-def]
    # On PostgreSQL a batch's terms travel joined by a character none of them holds (`joined`).
    record = services.catalog._import_record({"card": make_card("Odd Terms", tags=["\ue000x"]), "cardUrl": "https://odd.example/c.json"}, None)
    columns = services.catalog._new_agent_columns(actor, record)
    columns["input_modes"] = ["text/\x1fplain"]  # held by no card in practice; here to force the fallback
    new = services.catalog._writer.prepare(record, columns)
    with services.engine.begin() as conn:
        [pk] = services.catalog._writer.insert_agents(conn, [new])
    with services.sessions() as session:
        terms = {tuple(row) for row in session.execute(select(AgentTerm.kind, AgentTerm.value).where(AgentTerm.agent_pk == pk))}
    assert {("tag", "\ue000x"), ("input", "text/\x1fplain")} <= terms
    assert len(terms) == len(new.terms)


def test_joined_picks_a_separator_no_value_holds():  # type: ignore[no-untyped-def]
    from registry.catalog.new_agents_pg import joined

    assert joined(["a", "b"]) == ("a\x1fb", "\x1f")
    assert joined([]) == ("", "\x1f")
    text, separator = joined(["a\x1f", "\ue000", "\ue001b"])
    assert separator == "\ue002" and text.split(separator) == ["a\x1f", "\ue000", "\ue001b"]


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
    assert sorted(stored.values()) == sorted({url for _, url in requests.values()} - {"https://broken.example/card.json"})
