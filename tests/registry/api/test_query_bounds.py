"""Query strings are bounded for every endpoint in one place: a value over 1,024 characters, or
more than 100 values, is a 400 `query_over_limit` naming the parameter, before any view (or the
database) sees it."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

import pytest

from registry.catalog.api import SEARCH_PARAMS
from registry.request_input import MAX_QUERY_VALUE_CHARS, MAX_QUERY_VALUES
from tests.support.cards import make_card
from tests.support.envelopes import is_client_error, refusal_of


def refused(response: Any, parameter: str) -> None:
    """Refused naming the parameter, in the envelope of the route's protocol (the REST API's with
    its code and details; ARD's and A2A's with a message)."""
    refusal = refusal_of(response)
    assert refusal is not None and is_client_error(response, refusal), response.get_data()[:300]
    assert repr(parameter) in refusal.message
    if refusal.protocol == "rest":
        assert response.status_code == 400
        assert refusal.code == "query_over_limit" and refusal.details["parameter"] == parameter


@pytest.fixture
def tagged(client: Any, auth: dict[str, str]) -> str:
    """An agent whose tags the tag list and searches compare the values with."""
    card = make_card("Tagged", tags=["weather", "a" * 60], push=True)
    created = client.post("/v1/agents", json={"card": card, "cardUrl": "https://t.example/card.json"}, headers=auth)
    assert created.status_code == 201, created.json
    return str(created.json["id"])


def test_a_50000_character_tag_prefix_is_refused_naming_it(client: Any, tagged: str) -> None:
    refused(client.get("/v1/tags?prefix=" + "a" * 50_000), "prefix")


@pytest.mark.parametrize(
    "query",
    ["/v1/tags?prefix=", "/v1/agents?q=", "/v1/agents?tag=", "/v1/agents?skill=", "/v1/agents?inputMode="],
)
def test_values_up_to_the_limit_are_answered_and_longer_ones_refused(client: Any, tagged: str, query: str) -> None:
    at_limit = client.get(query + "%25_" * (MAX_QUERY_VALUE_CHARS // 2))  # 1,024 of LIKE's wildcards
    assert at_limit.status_code == 200, at_limit.get_data()[:300]
    refused(client.get(query + "a" * (MAX_QUERY_VALUE_CHARS + 1)), query.split("?")[1].rstrip("="))


def test_every_get_endpoint_refuses_an_over_long_value(
    app: Any, client: Any, auth: dict[str, str], tagged: str
) -> None:
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        url = rule.build({name: tagged if name == "agent_id" else "x" for name in rule.arguments})[1]
        refused(client.get(f"{url}?limit={'9' * 2_000}", headers=auth), "limit")
        refused(client.get(f"{url}?{'n' * 2_000}=1", headers=auth), "n" * 40 + "…")


def test_more_than_100_values_are_refused(client: Any) -> None:
    tags = "&".join(f"tag={quote(str(i))}" for i in range(MAX_QUERY_VALUES))
    seen_by_search = client.get(f"/v1/agents?{tags}")  # search's own answer: too many tags for it
    assert seen_by_search.status_code == 422 and "tags" in seen_by_search.json["error"]["message"]
    over = client.get(f"/v1/agents?{tags}&match=any")
    refused(over, "match")
    assert over.json["error"]["details"]["limit"] == MAX_QUERY_VALUES


# Every parameter of every GET, with the values that reached the database unchecked: each is a
# 4xx in the envelope (NUL: PostgreSQL's text cannot hold it; cursors past a BIGINT; times past the
# last UTC time), or an ordinary answer.
ODD_VALUES = [
    "",
    "-1",
    "9" * 30,
    "１２",
    "a\x00b",
    "\x00",
    "é",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    base64.urlsafe_b64encode(b"a:" + b"9" * 30).decode(),
    base64.urlsafe_b64encode("a:²".encode()).decode(),
]
GET_PARAMETERS = {
    "/v1/agents": sorted(SEARCH_PARAMS),
    "/v1/tags": ["limit", "prefix"],
    "/v1/tokens": ["includeRevoked", "limit", "cursor"],
    "/v1/keys": [],
    "/v1/relay/subscriptions": ["limit", "cursor"],
    "/v1/relay/subscriptions/{sub}/messages": ["state", "limit", "cursor"],
    "/v1/agents/{agent}": [],
    "/v1/agents/{agent}/card": ["version", "endorsed"],
    "/v1/agents/{agent}/versions": [],
    "/v1/agents/{agent}/health": ["limit"],
    "/v1/agents/{agent}/signatures": ["version"],
}


def odd_answer(response: Any) -> str | None:
    if response.status_code < 400:
        return None if response.status_code < 300 else f"answered {response.status_code}"
    error = response.json.get("error") if response.is_json else None
    if response.status_code >= 500 or not isinstance(error, dict) or not error.get("code"):
        return f"answered {response.status_code}: {response.get_data()[:200]!r}"
    return None


@pytest.fixture
def subscription(client: Any, admin_token: str, tagged: str) -> str:
    headers = {"Authorization": f"Bearer {admin_token}"}
    body = {"agentId": tagged, "targetUrl": "http://127.0.0.1:9/hook"}
    created = client.post("/v1/relay/subscriptions", json=body, headers=headers)
    assert created.status_code == 201, created.json
    return str(created.json["id"])


def test_odd_values_of_every_get_parameter_answer_4xx_or_an_answer(
    client: Any, admin_token: str, tagged: str, subscription: str
) -> None:
    headers = {"Authorization": f"Bearer {admin_token}"}
    problems = []
    for template, parameters in GET_PARAMETERS.items():
        url = template.format(agent=tagged, sub=subscription)
        for parameter in ["unknown", *parameters]:
            for value in ODD_VALUES:
                problem = odd_answer(client.get(url, query_string={parameter: value}, headers=headers))
                problems += [f"GET {url}?{parameter}={value!r}: {problem}"] if problem else []
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("parameter", ["q", "tag", "skill", "inputMode", "protocolVersion", "a\x00"])
def test_a_nul_in_a_query_string_is_refused_naming_the_parameter(client: Any, parameter: str) -> None:
    response = client.get("/v1/agents", query_string={parameter: "a\x00b"})
    assert response.status_code == 400
    assert response.json["error"]["code"] == "nul_character"
    assert response.json["error"]["details"]["parameter"] == parameter


def test_a_nul_in_any_path_segment_is_refused_naming_it(app: Any, client: Any, admin_token: str) -> None:
    headers = {"Authorization": f"Bearer {admin_token}"}
    problems = []
    for rule in app.url_map.iter_rules():
        if not rule.arguments or rule.endpoint == "static":
            continue
        url = rule.build(dict.fromkeys(rule.arguments, "ab"))[1].replace("ab", "a%00b")
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            response = client.open(url, method=method, headers=headers)
            refusal = refusal_of(response)
            if refusal is None or not is_client_error(response, refusal) or "U+0000" not in refusal.message:
                problems.append(f"{method} {url}: {response.status_code} {response.get_data()[:200]!r}")
            elif refusal.protocol == "rest" and (
                refusal.code != "nul_character" or refusal.details["segment"] not in rule.arguments
            ):
                problems.append(f"{method} {url}: {refusal.code} names {refusal.details}")
    ingress = client.post("/relay/sub_a%00b", json={"kind": "task", "id": "t"}, headers={"Authorization": "Bearer x"})
    if ingress.status_code != 400 or ingress.json["error"]["details"] != {"segment": "sub_id"}:
        problems.append(
            f"POST /relay/sub_a%00b: {ingress.status_code} {ingress.get_data()[:200]!r}"
        )  # in front of Flask
    assert not problems, "\n".join(problems)
