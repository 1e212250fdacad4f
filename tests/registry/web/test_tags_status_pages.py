"""The tags page (`/tags`) and the registry's status page (`/status`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert

from registry.db.types import utcnow
from registry.jobs import DatabaseJobRuns
from registry.jobs.worker import Worker
from registry.relay import RelayMessage, RelaySubscription
from registry.schedule import scheduled_jobs
from registry.web import tags_page
from tests.registry.web.page_tree import Node, page
from tests.support.cards import make_card

SECRET_TARGET = "https://client.example.com/hooks/secret-path"


def register(client: Any, auth: dict[str, str], name: str, tags: list[str]) -> str:
    body = {"card": make_card(name, tags=tags), "cardUrl": f"https://{name.lower()}.example.com/card.json"}
    response = client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def get_page(client: Any, url: str) -> Node:
    response = client.get(url)
    assert response.status_code == 200, response.data[:500]
    assert response.mimetype == "text/html"
    return page(response.data)


def tag_rows(doc: Node) -> list[tuple[str, str, str]]:
    return [
        (li.one("a").text(), li.one("a")["href"] or "", li.one("span", class_="count").text())
        for li in doc.one("ul", id="tags").all("li")
    ]


def test_tags_are_listed_with_counts_and_link_to_their_search(client: Any, auth: dict[str, str]) -> None:
    register(client, auth, "Alpha", ["finance", "fx"])
    register(client, auth, "Beta", ["finance", "weather"])
    doc = get_page(client, "/tags")
    assert tag_rows(doc) == [
        ("finance", "/?tag=finance", "2 agents"),
        ("fx", "/?tag=fx", "1 agent"),
        ("weather", "/?tag=weather", "1 agent"),
    ]
    form = doc.one("form", role="search")
    assert form["method"] == "get" and form["action"] == "/tags"
    assert doc.one("label", for_="tag-prefix").text() == "Tags starting with"


def test_the_prefix_filter_narrows_the_list_and_says_when_nothing_matches(client: Any, auth: dict[str, str]) -> None:
    register(client, auth, "Alpha", ["finance", "fx", "weather"])
    doc = get_page(client, "/tags?prefix=F")
    assert [name for name, _, _ in tag_rows(doc)] == ["finance", "fx"]
    assert doc.one("input", name="prefix")["value"] == "F"
    assert "No tag starts with “zzz”" in get_page(client, "/tags?prefix=zzz").text()


def test_a_long_list_is_shown_a_page_at_a_time(client: Any, auth: dict[str, str], monkeypatch: Any) -> None:
    monkeypatch.setattr(tags_page, "PAGE", 2)
    register(client, auth, "Alpha", ["a1", "a2", "a3"])
    first = get_page(client, "/tags")
    assert len(tag_rows(first)) == 2
    more = first.one("a", class_="more-link")["href"]
    assert more == "/tags?limit=4"
    second = get_page(client, more)
    assert [name for name, _, _ in tag_rows(second)] == ["a1", "a2", "a3"] and second.all("a", class_="more-link") == []
    assert get_page(client, "/tags?limit=nonsense").all("ul", id="tags")  # a bad limit is the default


def test_the_status_page_counts_agents_and_shows_the_jobs_and_relay_queue(
    client: Any, auth: dict[str, str], services: Any, writer_token: str
) -> None:
    first = register(client, auth, "Alpha", ["x"])
    register(client, auth, "Beta", ["y"])
    assert client.patch(f"/v1/agents/{first}", json={"status": "deprecated"}, headers=auth).status_code == 200
    seed_relay_messages(services, services.tokens.authenticate(writer_token).principal_id)
    response = client.get("/status")
    html = response.data.decode()
    doc = page(html)
    counts = {
        table.one("caption").text(): {tr.one("th").text(): tr.one("td").text() for tr in table.one("tbody").all("tr")}
        for table in doc.one(id="agent-counts").all("table")
    }
    assert counts == {
        "Status": {"active": "1", "deprecated": "1"},
        "Health": {"unknown": "2"},
        "Signature": {"unsigned": "2"},
    }
    jobs = {
        tr.one("th").text(): tr.all("td")[3].text()
        for tr in doc.one("table", class_="jobs-table").one("tbody").all("tr")
    }
    assert "agents due for a probe: 2" in jobs["health-probe"]
    assert "last check recorded: never" in jobs["health-probe"]
    assert "messages due: 1" in jobs["relay-delivery"]
    relay = {dt_.text(): dd.text() for dt_, dd in zip(doc.one(id="relay").all("dt"), doc.one(id="relay").all("dd"))}
    assert relay["Due for delivery now"] == "1"
    assert relay["Waiting (behind an earlier message of their task, or backing off)"] == "1"
    assert relay["Dead-lettered (kept until retention)"] == "2"
    assert SECRET_TARGET not in html and "client.example.com" not in html


def test_the_status_page_shows_each_jobs_last_run_as_a_worker_recorded_it(client: Any, services: Any) -> None:
    assert "never recorded" in job_rows(client)["tag-counts"][0]
    jobs = [job for job in scheduled_jobs(services) if job.name == "tag-counts"]
    Worker(jobs, threads=1, runs=DatabaseJobRuns(services.engine)).run_once()
    last, worked = job_rows(client)["tag-counts"][:2]
    assert "UTC: ok" in last and " ms" in last and "by " in last
    assert worked == "never"  # nothing to fold: an idle run


def job_rows(client: Any) -> dict[str, list[str]]:
    doc = get_page(client, "/status")
    rows = doc.one("table", class_="jobs-table").one("tbody").all("tr")
    return {tr.one("th").text(): [td.text() for td in tr.all("td")[1:]] for tr in rows}


def seed_relay_messages(services: Any, owner_id: int) -> None:
    """A subscription with one message due, one waiting behind it and two dead-lettered."""
    now = utcnow()
    with services.engine.begin() as conn:
        sub_pk = conn.execute(
            insert(RelaySubscription).returning(RelaySubscription.pk),
            {
                "id": "sub-1",
                "owner_id": owner_id,
                "agent_id": "gone",
                "target_url": SECRET_TARGET,
                "auth_mode": "token",
                "status": "active",
                "created_at": now,
                "updated_at": now,
            },
        ).scalar_one()
        base = {"subscription_pk": sub_pk, "task_key": "t", "kind": "push", "body": b"{}", "received_at": now}
        base |= {"attempts": 0, "replays": 0}
        past = now - dt.timedelta(seconds=5)
        rows = [
            {"id": "m1", "seq": 1, "state": "pending", "due_at": past},
            {"id": "m2", "seq": 2, "state": "pending", "due_at": None},
            {"id": "m3", "seq": 3, "state": "dead", "due_at": None, "finished_at": past},
            {"id": "m4", "seq": 4, "state": "dead", "due_at": None, "finished_at": past},
        ]
        conn.execute(insert(RelayMessage), [{**base, "finished_at": None, **row} for row in rows])
