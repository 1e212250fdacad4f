"""The agent page (`/agents/<id>`) as a person reads it: what the card says, how to call the agent,
what validation and verification found, its health over time and its history; and that nothing a
card says can become markup, script or a dangerous link."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import update

from registry.catalog import Agent
from signing import SigningKey, generate_key, public_jwks, sign_card
from tests.registry.web.page_tree import Node, page
from tests.support.a2a_agents import PlainAgent, raw
from tests.support.cards import make_card, make_v03_card, with_changes

CARD_URL = "https://agent.example.com/.well-known/agent-card.json"


def register(client: Any, auth: dict[str, str], card: dict[str, Any], card_url: str = CARD_URL) -> str:
    response = client.post("/v1/agents", json={"card": card, "cardUrl": card_url}, headers=auth)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def open_page(client: Any, agent_id: str) -> Node:
    response = client.get(f"/agents/{agent_id}")
    assert response.status_code == 200, response.data[:500]
    assert response.mimetype == "text/html"
    return page(response.data)


def section(doc: Node, section_id: str) -> Node:
    return doc.one(id=section_id)


def test_the_page_shows_the_card_skills_tags_and_examples(client: Any, auth: dict[str, str]) -> None:
    card = make_card("Currency Agent", tags=["finance", "Exchange Rates"], skills=2, description="Converts money")
    doc = open_page(client, register(client, auth, card))
    assert doc.one("h1").text() == "Currency Agent"
    header = doc.one("header", class_="agent-header").text()
    assert "Converts money" in header and "Example Org" in header and "version 1.0.0" in header
    assert doc.one("a", href="https://example.com")["rel"] == "noopener noreferrer nofollow"
    skills = section(doc, "skills")
    assert [h.text() for h in skills.all("h3")] == ["Currency Agent skill 0 skill-0", "Currency Agent skill 1 skill-1"]
    tags = skills.all("a", class_="tag")
    assert [(a.text(), a["href"]) for a in tags[:2]] == [
        ("finance", "/?tag=finance"),
        ("Exchange Rates", "/?tag=Exchange+Rates"),
    ]
    assert "example 1 for Currency Agent" in skills.text()


def test_interfaces_have_binding_url_version_and_a_copy_button_for_every_card_version(
    client: Any, auth: dict[str, str]
) -> None:
    v1 = make_card("One", url="https://one.example.com/a2a")
    v1["supportedInterfaces"].append(
        {"url": "https://one.example.com/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    )
    v03 = make_v03_card("Old", url="https://old.example.com/a2a")
    v03["additionalInterfaces"] = [
        {"url": "https://old.example.com/a2a", "transport": "JSONRPC"},
        {"url": "https://old.example.com/rest", "transport": "HTTP+JSON"},
    ]
    rows = {}
    for card, url in ((v1, "https://one.example.com/card.json"), (v03, "https://old.example.com/card.json")):
        interfaces = section(open_page(client, register(client, auth, card, url)), "interfaces")
        rows[card["name"]] = [
            (cells[0].text(), cells[1].one("code").text(), cells[1].one("button")["data-copy"], cells[2].text())
            for cells in (row.all("td") for row in interfaces.one("tbody").all("tr"))
        ]
    assert rows["One"] == [
        ("JSONRPC", "https://one.example.com/a2a", "https://one.example.com/a2a", "1.0"),
        ("GRPC", "https://one.example.com/grpc", "https://one.example.com/grpc", "1.0"),
    ]
    assert rows["Old"] == [
        ("JSONRPC", "https://old.example.com/a2a", "https://old.example.com/a2a", "0.3.0"),
        ("HTTP+JSON", "https://old.example.com/rest", "https://old.example.com/rest", "0.3.0"),
    ]


def test_security_schemes_say_what_they_require(client: Any, auth: dict[str, str]) -> None:
    card = make_card("Locked")
    card["securitySchemes"] = {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}},
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {"clientCredentials": {"tokenUrl": "https://auth.example.com/token", "scopes": {"read": "r"}}}
            }
        },
    }
    card["securityRequirements"] = [{"schemes": {"oauth": {"list": ["read"]}}}, {"schemes": {"key": {"list": []}}}]
    security = section(open_page(client, register(client, auth, card)), "security")
    text = security.text()
    assert "key : API key" in text and "key in header: X-Api-Key" in text
    assert "oauth : OAuth 2.0" in text and "clientCredentials scopes: read" in text
    assert security.one("a", href="https://auth.example.com/token")["rel"] == "noopener noreferrer nofollow"
    assert [li.text() for li in security.one("ul", class_="security-requirements").all("li")] == [
        "oauth (scopes read)",
        "key",
    ]


def test_the_validation_report_lists_issues_with_paths_and_rule_ids(client: Any, auth: dict[str, str]) -> None:
    card = make_card("Loose", url="http://agent.example.com/a2a")
    card["bogusField"] = 1
    validation = section(open_page(client, register(client, auth, card)), "validation")
    issues = [tuple(td.text() for td in row.all("td")) for row in validation.one("tbody").all("tr")]
    assert ("warning", "unknown-field", "/bogusField", "`bogusField` is not a field of an A2A v1.0 card") in issues
    assert ("warning", "url-insecure", "/supportedInterfaces/0/url") in [issue[:3] for issue in issues]
    clean = section(
        open_page(client, register(client, auth, make_card("Tidy"), "https://t.example.com/c")), "validation"
    )
    assert "passed every check" in clean.text()


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key("EdDSA")


def test_the_signature_in_words_for_a_verified_an_unverifiable_and_an_unsigned_card(
    client: Any, auth: dict[str, str], key: SigningKey
) -> None:
    unknown = section(open_page(client, register(client, auth, sign_card(make_card("Signed"), key))), "signature")
    assert "no key could be found" in unknown.text() and f"Signed with key {key.kid} (EdDSA)" in unknown.text()
    assert "its key was not found" in unknown.text()
    assert client.post("/v1/keys", json={"jwks": public_jwks([key])}, headers=auth).status_code == 201
    verified_id = register(client, auth, sign_card(make_card("Signed too"), key), "https://b.example.com/card")
    verified = section(open_page(client, verified_id), "signature")
    line = verified.one("li", class_="signature-line").text()
    assert line.startswith(f"Signed with key {key.kid} (EdDSA): verified against the keys the agent's owner registered")
    assert "Endorsed by this registry" in verified.text()
    download = verified.one("a", download=f"{verified_id}.endorsed.json")
    assert download["href"] == f"/v1/agents/{verified_id}/card?endorsed=true"
    endorsed = client.get(download["href"])
    assert endorsed.status_code == 200 and len(endorsed.json["signatures"]) == 2
    unsigned = section(
        open_page(client, register(client, auth, make_card("Plain"), "https://c.example.com/c")), "signature"
    )
    assert "Not signed: the card carries no signature." in unsigned.text()
    assert unsigned.all("li", class_="signature-line") == []


@pytest.fixture
def plain_agent() -> Iterator[PlainAgent]:
    agent = PlainAgent()
    yield agent
    agent.stop()


def test_health_shows_the_state_and_a_chart_of_up_and_down_checks(
    client: Any, auth: dict[str, str], plain_agent: PlainAgent
) -> None:
    agent_id = register(client, auth, plain_agent.card_dict(), plain_agent.base_url + "/card.json")
    assert client.post(f"/v1/agents/{agent_id}/check", headers=auth).status_code == 200
    plain_agent.behaviour = raw(500, b"broken")
    assert client.post(f"/v1/agents/{agent_id}/check", headers=auth).status_code == 200
    health = section(open_page(client, agent_id), "health")
    assert "Last check" in health.text() and "Uptime, last 24 h 50.0 %" in health.text()
    chart = health.one("svg")
    assert chart["role"] == "img" and chart["aria-label"].startswith("up 50 % of 2 checks over")
    assert [bar["data-outcome"] for bar in chart.all("rect", class_="hc-bar")] == ["up", "down"]
    assert "up 50 % of 2 checks" in health.one("figcaption").text() and "(1 down)" in health.one("figcaption").text()


def test_the_version_history_shows_what_changed(client: Any, auth: dict[str, str]) -> None:
    card = make_card("Drifting")
    agent_id = register(client, auth, card)
    changed = with_changes(card, description="Now it also forecasts", version="1.1.0")
    assert client.put(f"/v1/agents/{agent_id}/card", json=changed, headers=auth).status_code == 200
    history = section(open_page(client, agent_id), "history")
    versions = history.all("li", class_="version")
    assert versions[0].one("strong").text() == "Version 2" and "(current)" in versions[0].text()
    assert versions[0].one("ul", class_="version-changes").text() == "Changed: /description , /version"
    assert "First version seen." in versions[1].text()


def test_the_card_json_is_pretty_printed_and_downloadable(client: Any, auth: dict[str, str]) -> None:
    card = make_card("Printed")
    agent_id = register(client, auth, card)
    shown = section(open_page(client, agent_id), "card-json")
    assert json.loads(shown.one("code").text().replace(" ", "")) == json.loads(json.dumps(card).replace(" ", ""))
    assert '\n  "name": "Printed"' in shown.one("pre").children[0].children[0]  # type: ignore[union-attr]
    assert shown.one("a", download=f"{agent_id}.json")["href"] == f"/v1/agents/{agent_id}/card"


def test_a_malicious_card_renders_inert(client: Any, auth: dict[str, str], services: Any) -> None:
    card = make_card("<script>alert(1)</script>")
    card["skills"][0]["name"] = '"><img src=x onerror=alert(1)>'
    card["skills"][0]["tags"] = ['"><svg onload=alert(2)>']
    agent_id = register(client, auth, card)
    # Validation refuses javascript: URLs; a row stored before it did still must not link one.
    with services.engine.begin() as conn:
        profile = json.loads(conn.scalar(Agent.__table__.select().with_only_columns(Agent.profile)))
        profile.update(documentationUrl="javascript:alert(3)", provider={"organization": "Evil", "url": "javascript:x"})
        conn.execute(update(Agent).values(profile=json.dumps(profile)))
    response = client.get(f"/agents/{agent_id}")
    html = response.data.decode()
    doc = page(html)
    assert doc.one("h1").text() == "<script>alert(1)</script>"
    assert "<script>alert" not in html and "<img src=x" not in html and "<svg onload" not in html
    assert doc.all("img") == [] and all(s["src"] for s in doc.all("script"))  # only the page's own script
    assert not [a for a in doc.all("a") if (a["href"] or "").lower().startswith("javascript")]
    assert "javascript:alert(3)" in doc.one("header", class_="agent-header").text()
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]


def test_an_unknown_id_is_a_404_page_and_a_prefix_redirects_to_the_whole_id(client: Any, auth: dict[str, str]) -> None:
    missing = client.get("/agents/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404 and missing.mimetype == "text/html"
    agent_id = register(client, auth, make_card("Prefixed"))
    redirected = client.get(f"/agents/{agent_id[:8]}")
    assert redirected.status_code == 302 and redirected.headers["Location"] == f"/agents/{agent_id}"
