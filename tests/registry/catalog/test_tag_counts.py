"""Tag counts kept as the catalog changes agree with counting the catalog, before and after a fold."""

from __future__ import annotations

import json
import random
import threading

from sqlalchemy import func, select, text

from registry.catalog.models import TagCount, TagCountDelta
from tests.support.cards import make_card

# What `GET /v1/tags` counted on every request before the counts were kept: each tag row of each
# active agent.
LIVE_COUNTS = text(
    "SELECT t.value, COUNT(*) FROM agent_terms t JOIN agents a ON a.pk = t.agent_pk "
    "WHERE t.kind = 'tag' AND a.status = 'active' GROUP BY t.value"
)
# Case and white-space variants normalise to the same tag.
TAGS = ["weather", "Weather ", "travel", "maps", "finance", "news", "sports", "  Maps"]


def live_counts(services) -> dict[str, int]:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return {tag: count for tag, count in conn.execute(LIVE_COUNTS)}


def listed(services) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return services.search.tags(1000)


def random_card(rng: random.Random, name: str) -> dict:  # type: ignore[type-arg]
    card = make_card(name, skills=rng.randint(1, 3))
    for skill in card["skills"]:
        skill["tags"] = rng.sample(TAGS, rng.randint(1, 3))
    return card


def test_tag_counts_stay_exact_through_every_kind_of_catalog_change(services, actor):  # type: ignore[no-untyped-def]
    rng = random.Random(20261122)
    ids: list[str] = []
    serial = 0
    for step in range(80):
        serial += 1
        action = rng.choice(["register", "import", "replace", "status", "status", "delete"] if ids else ["register"])
        if action == "register":
            card = random_card(rng, f"Agent {serial}")
            ids.append(services.catalog.register_card(actor, card, f"https://a{serial}.example.com/card.json").agent.id)
        elif action == "import":
            items = [
                {
                    "card": random_card(rng, f"Agent {serial}-{n}"),
                    "cardUrl": f"https://i{serial}-{n}.example.com/card.json",
                }
                for n in range(3)
            ]
            ids.extend(outcome.agent_id for outcome in services.catalog.import_cards(actor, items))
        elif action == "replace":
            services.catalog.replace_card(actor, rng.choice(ids), random_card(rng, f"Agent {serial}"))
        elif action == "status":
            services.catalog.update_status(actor, rng.choice(ids), rng.choice(["active", "deprecated"]), None)
        else:
            agent_id = rng.choice(ids)
            services.catalog.delete(actor, agent_id)
            ids.remove(agent_id)
        if step % 20 == 10:
            services.catalog.fold_tag_counts()
        tags = listed(services)
        assert dict(tags) == live_counts(services), f"after step {step}: {action}"
        assert [count for _, count in tags] == sorted((count for _, count in tags), reverse=True)

    assert services.catalog.fold_tag_counts() > 0
    assert dict(listed(services)) == live_counts(services)
    with services.engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(TagCountDelta)) == 0
        assert conn.scalar(select(func.min(TagCount.count))) > 0  # tags no active agent carries are gone
    assert services.catalog.fold_tag_counts() == 0


def test_a_deprecated_agent_leaves_the_counts_and_comes_back_when_reactivated(services, actor, client):  # type: ignore[no-untyped-def]
    agent = services.catalog.register_card(
        actor, make_card("Solo", tags=["Solo-Tag"]), "https://solo.example.com/card.json"
    ).agent
    assert client.get("/v1/tags?prefix=solo").get_json()["items"] == [{"tag": "solo-tag", "count": 1}]
    services.catalog.update_status(actor, agent.id, "deprecated", "moved")
    services.catalog.update_status(actor, agent.id, "deprecated", "still moved")  # no change, counted once
    assert client.get("/v1/tags?prefix=solo").get_json()["items"] == []
    services.catalog.fold_tag_counts()
    services.catalog.update_status(actor, agent.id, "active", None)
    assert client.get("/v1/tags?prefix=solo").get_json()["items"] == [{"tag": "solo-tag", "count": 1}]


def test_a_tag_prefix_is_matched_literally_whatever_it_holds(services, actor, client):  # type: ignore[no-untyped-def]
    """`%`, `_` and the escape character in a prefix are characters of the tag, not patterns."""
    for n, tag in enumerate(["a_b", "axb", "50%-off", "500-off", "x/y", "x//y"]):
        services.catalog.register_card(
            actor, make_card(f"Agent {n}", tags=[tag]), f"https://p{n}.example.com/card.json"
        )

    def tags(prefix: str) -> list[str]:
        return [item["tag"] for item in client.get("/v1/tags", query_string={"prefix": prefix}).get_json()["items"]]

    assert (tags("a_"), tags("50%"), tags("x/"), tags("x//"), tags("%"), tags("_")) == (
        ["a_b"],
        ["50%-off"],
        ["x//y", "x/y"],
        ["x//y"],
        [],
        [],
    )
    services.catalog.fold_tag_counts()  # the folded counts are read the same way
    assert (tags("a_"), tags("50%"), tags("x//"), tags("%")) == (["a_b"], ["50%-off"], ["x//y"], [])


def test_the_worker_folds_the_deltas_with_the_tag_counts_job(services, actor, database_url):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from cli.main import cli
    from cli.worker import JOB_CHOICES
    from registry.schedule import JOB_NAMES

    assert JOB_CHOICES == JOB_NAMES
    services.catalog.register_card(
        actor, make_card("Folded", tags=["one", "two"]), "https://folded.example.com/card.json"
    )
    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "x" * 32}
    result = CliRunner().invoke(
        cli, ["worker", "--once", "--json", "--job", "tag-counts"], env=env, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert [(r["job"], r["claimed"]) for r in json.loads(result.output)] == [("tag-counts", 2)]
    with services.engine.connect() as conn:
        assert dict(conn.execute(select(TagCount.tag, TagCount.count)).all()) == {"one": 1, "two": 1}
    assert listed(services) == [("one", 1), ("two", 1)]


def _meanwhile(action) -> tuple[threading.Thread, list[BaseException]]:  # type: ignore[no-untyped-def]
    """Run `action` in another thread and give it half a second: time to finish, or to wait for a
    lock the caller holds."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:  # handed to the test
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(0.5)
    return thread, errors


def test_two_deletes_of_one_agent_at_once_take_its_tags_off_once(services, actor, monkeypatch):  # type: ignore[no-untyped-def]
    doomed = services.catalog.register_card(
        actor, make_card("Doomed", tags=["x"]), "https://doomed.example.com/card.json"
    ).agent
    services.catalog.register_card(actor, make_card("Stays", tags=["x"]), "https://stays.example.com/card.json")
    store = services.search._store
    count_tags, other = store._count_tags, []

    def delete_again_meanwhile(conn, added=(), removed=()):  # type: ignore[no-untyped-def]
        if not other:  # the first delete has read the agent's tags; a retry of it arrives now
            other.append(_meanwhile(lambda: services.catalog.delete(actor, doomed.id)))
        return count_tags(conn, added, removed)

    monkeypatch.setattr(store, "_count_tags", delete_again_meanwhile)
    services.catalog.delete(actor, doomed.id)
    thread, errors = other[0]
    thread.join(60)
    assert not thread.is_alive() and errors == []
    assert dict(listed(services)) == live_counts(services) == {"x": 1}


def test_a_new_card_and_a_deprecation_at_once_leave_the_agent_uncounted(services, actor, monkeypatch):  # type: ignore[no-untyped-def]
    from registry.catalog import store as store_module

    agent = services.catalog.register_card(
        actor, make_card("Racing", tags=["old"]), "https://racing.example.com/card.json"
    ).agent
    next_version, other = store_module._next_version, []

    def deprecate_meanwhile(conn, agent_pk):  # type: ignore[no-untyped-def]
        if not other:  # the new card's writer has read the agent's status; a deprecation arrives now
            other.append(_meanwhile(lambda: services.catalog.update_status(actor, agent.id, "deprecated", None)))
        return next_version(conn, agent_pk)

    monkeypatch.setattr(store_module, "_next_version", deprecate_meanwhile)
    services.catalog.replace_card(actor, agent.id, make_card("Racing", tags=["new"]))
    thread, errors = other[0]
    thread.join(60)
    assert not thread.is_alive() and errors == []
    assert dict(listed(services)) == live_counts(services) == {}
    with services.engine.connect() as conn:
        status_term = conn.scalar(text("SELECT value FROM agent_terms WHERE kind = 'status'"))
    assert status_term == "deprecated"
