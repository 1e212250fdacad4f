"""The find-agents skill: a text query in the catalog's syntax or a data part of filters, answered
with the agents (the issue's shape) and a short text; nothing found says so and suggests tags."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.a2a_calls import artifact_data, artifact_text, names, rpc, send, send_error, user_message

AGENT_FIELDS = {"id", "name", "description", "cardUrl", "interfaces", "matchedSkills", "health", "signature"}


def test_text_in_the_query_syntax_finds_agents_in_the_issues_shape(client: Any, catalog_ids: dict[str, str]) -> None:
    task = send(client, "tag:weather forecast")
    found = artifact_data(task)
    assert set(found) == {"agents", "total", "nextCursor"} and found["total"] == 1 and found["nextCursor"] is None
    (agent,) = found["agents"]
    assert set(agent) == AGENT_FIELDS
    assert (agent["id"], agent["name"]) == (catalog_ids["Weather Agent"], "Weather Agent")
    assert agent["cardUrl"] == "https://weather.example.com/.well-known/agent-card.json"
    assert agent["interfaces"] == [
        {"url": "https://weather.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert [skill["id"] for skill in agent["matchedSkills"]] == ["skill-0"]
    assert agent["health"]["state"] == "unknown" and agent["signature"] == {"state": "unsigned", "kids": []}
    assert artifact_text(task).startswith('Found 1 agent for "tag:weather forecast":\n- Weather Agent: ')
    assert task["metadata"] == {"skill": "find-agents"}


def test_plain_words_search_the_text_and_filters_narrow(client: Any, catalog_ids: dict[str, str]) -> None:
    assert names(send(client, "Currency Agent answers questions"))[0] == "Currency Agent"  # ranked best first
    assert names(send(client, "cap:streaming")) == ["Weather Agent"]
    assert names(send(client, "is:streaming agent")) == ["Weather Agent"]
    assert names(send(client, "tag:fx tag:weather")) == []  # tags match all
    assert sorted(names(send(client, "tag:fx tag:weather match:any"))) == ["Currency Agent", "Weather Agent"]
    assert names(send(client, "output:application/json tag:language")) == ["Translator Agent"]
    assert names(send(client, "input:image/png")) == []
    assert len(names(send(client, "is:unsigned proto:1.0"))) == 3


def test_a_data_part_holds_the_structured_filters(client: Any, catalog_ids: dict[str, str]) -> None:
    data = {"tags": ["currency", "translation"], "match": "any", "protocolVersion": "1.0", "signature": "unsigned"}
    assert sorted(names(send(client, data=data))) == ["Currency Agent", "Translator Agent"]
    data = {"q": "weather", "capabilities": ["streaming"], "inputModes": ["text/plain"], "health": "unknown"}
    assert names(send(client, data=data)) == ["Weather Agent"]
    assert names(send(client, data={"tags": "fx"})) == ["Currency Agent"]  # one tag as a string will do
    assert len(names(send(client, data={}))) == 3  # no filter: every agent, in registration order


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ({"tag": ["x"]}, "does not know ['tag']"),
        ({"tags": [1]}, "tags must be a list of strings"),
        ({"match": "some"}, "match: takes one of all, any"),
        ({"health": "sideways"}, "health: takes one of"),
        ({"capabilities": ["teleport"]}, "cap: takes one of"),
        ({"limit": 0}, "limit must be a whole number from 1 to 200"),
        ({"limit": 2.5}, "limit must be a whole number"),
        ({"cursor": "made-up"}, "cursor is not one this agent gave"),
        ({"inputModes": ["text/plain", "application/json"]}, "given twice"),
        ({"tags": [f"t{i}" for i in range(33)]}, "at most 32 tags"),
        ({"includeDead": "yes"}, "includeDead must be true or false"),
        ([1, 2], "must be an object of filters"),
    ],
)
def test_filters_it_cannot_read_are_invalid_params_that_say_what_would_do(
    client: Any, data: Any, complaint: str
) -> None:
    error = send_error(client, data=data)
    assert error["code"] == -32602 and complaint in error["message"], error


def test_text_and_data_together_make_one_query(client: Any, catalog_ids: dict[str, str]) -> None:
    params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "tag:fx"}, {"data": {"limit": 1}}]}}
    task = rpc(client, "SendMessage", params)["result"]["task"]
    assert names(task) == ["Currency Agent"]
    params["message"]["parts"] = [{"text": "health:up"}, {"data": {"health": "down"}}]
    assert "given twice" in rpc(client, "SendMessage", params)["error"]["message"]


def test_nothing_found_says_so_and_suggests_the_closest_tags(client: Any, catalog_ids: dict[str, str]) -> None:
    task = send(client, "tag:curr")
    assert artifact_data(task) == {"agents": [], "total": 0, "nextCursor": None, "suggestedTags": ["currency"]}
    assert artifact_text(task) == 'No agent found for "tag:curr". Closest tags: currency (ask with tag:currency).'
    suggested = artifact_data(send(client, "zzyzx qwxv"))["suggestedTags"]
    assert suggested and set(suggested) <= {"weather", "forecast", "currency", "fx", "translation", "language"}


def test_pages_follow_the_cursor_and_count_what_was_answered(client: Any, catalog_ids: dict[str, str]) -> None:
    first = artifact_data(send(client, data={"limit": 2}))
    second = artifact_data(send(client, data={"limit": 2, "cursor": first["nextCursor"]}))
    assert (first["total"], second["total"], second["nextCursor"]) == (2, 3, None)
    assert len({agent["id"] for agent in first["agents"] + second["agents"]}) == 3


def test_the_artifact_holds_only_the_modes_the_client_accepts(client: Any, catalog_ids: dict[str, str]) -> None:
    def parts(modes: list[str]) -> list[str]:
        params = {"message": user_message("fx"), "configuration": {"acceptedOutputModes": modes}}
        task = rpc(client, "SendMessage", params)["result"]["task"]
        return [part["mediaType"] for part in task["artifacts"][0]["parts"]]

    assert parts(["text/plain"]) == ["text/plain"]
    assert parts(["application/json"]) == ["application/json"]
    assert parts(["*/*"]) == parts([]) == ["application/json", "text/plain"]


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("answers questions", {"q": "answers questions"}),
        ("tag:fx tag:weather match:any", {"tag": ["fx", "weather"], "match": "any"}),
        (
            "agent output:application/json is:unsigned",
            {"q": "agent", "outputMode": "application/json", "signature": "unsigned"},
        ),
    ],
)
def test_the_search_is_the_rest_apis(
    client: Any, catalog_ids: dict[str, str], text: str, params: dict[str, Any]
) -> None:
    rest = client.get("/v1/agents", query_string={**params, "limit": 10}).get_json()["items"]
    assert [agent["id"] for agent in artifact_data(send(client, text))["agents"]] == [agent["id"] for agent in rest]
