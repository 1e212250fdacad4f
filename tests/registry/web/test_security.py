"""Card text is untrusted: the pages show it as text, link only to http(s) URLs and tell the browser
to run no script but the registry's own file. Errors of pages are pages; the API keeps its
envelopes; no request makes the server fail."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import Markup
from sqlalchemy import select, update

from registry import jsontext
from registry.catalog import Agent
from registry.web.links import card_link
from tests.registry.web.page_tree import Node, page
from tests.support.cards import make_card

SCRIPT_NAME = "<script>alert(1)</script>"
PAGES = ["/", "/?q=anything", "/?q=tag:", "/nope", "/agents/no-such-agent"]


def inline_code(doc: Node) -> list[str]:
    """What a strict CSP would block: inline scripts, style elements and attributes, event handlers."""
    found = ["<script> without src" for node in doc.all("script") if not node["src"]]
    found += ["<style>" for _ in doc.all("style")]
    found += [
        f"{name} on <{node.tag}>"
        for node in doc.walk()
        for name in node.attrs
        if name == "style" or name.startswith("on")
    ]
    return found


@pytest.fixture
def hostile(services, actor) -> str:  # type: ignore[no-untyped-def]
    """An agent whose card text is markup, and whose stored links are `javascript:` URLs. The
    validator refuses such URLs in new cards (`url-invalid`), so they are written into the stored
    profile directly: the pages must render inert whatever the catalog holds."""
    card = make_card(SCRIPT_NAME, tags=["<b>bold</b>"], description='"><img src=x onerror=alert(1)>')
    card["provider"] = {"organization": "Evil <i>Org</i>", "url": "https://evil.example.com/"}
    agent_id = services.catalog.register_card(actor, card, "https://evil.example.com/card.json").agent.id
    with services.engine.begin() as conn:
        profile = jsontext.loads(conn.scalar(select(Agent.profile).where(Agent.id == agent_id)))
        profile["provider"]["url"] = "javascript:alert(document.domain)"
        profile["documentationUrl"] = "javascript:alert(1)"
        conn.execute(update(Agent).where(Agent.id == agent_id).values(profile=jsontext.dumps_text(profile)))
    return agent_id


def test_a_hostile_card_shows_as_text(client, hostile):
    response = client.get("/")
    html = response.get_data(as_text=True)
    assert SCRIPT_NAME not in html and "<img src=x" not in html and "<b>bold" not in html
    doc = page(html)
    result = doc.one("li", class_="result")
    assert result.one("h3").text() == SCRIPT_NAME
    assert result.one("p", class_="description").text() == '"><img src=x onerror=alert(1)>'
    assert [a.text() for a in result.one("ul", class_="tags").all("a")] == ["<b>bold</b>"]
    # The provider's javascript: URL is not a link: its name is shown as text.
    provider = result.one("p", class_="provider")
    assert provider.text() == "by Evil <i>Org</i>" and provider.all("a") == []
    assert not [a for a in doc.all("a") if (a["href"] or "").lower().startswith("javascript")]
    assert inline_code(doc) == []


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "/relative/path",
        "//evil.example.com/protocol-relative",
        "https://",
        "https://exa mple.com/",
        "https://example.com/\n",
        "mailto:someone@example.com",
        "",
        None,
        42,
    ],
)
def test_only_http_urls_become_links(url):
    shown = card_link(url, "the docs")
    assert "<a" not in shown and shown == Markup.escape("the docs")
    assert "<a" not in card_link(url)


def test_http_links_from_cards_keep_nothing_for_the_site_they_open():
    assert card_link("https://example.com/docs?a=1&b=2") == Markup(
        '<a href="https://example.com/docs?a=1&amp;b=2" rel="noopener noreferrer nofollow">'
        "https://example.com/docs?a=1&amp;b=2</a>"
    )
    quoted = card_link('http://example.com/"><script>x</script>', "<b>docs</b>")
    assert "<script>" not in quoted and "<b>" not in quoted
    assert quoted.startswith('<a href="http://example.com/&#34;&gt;&lt;script&gt;')


@pytest.mark.parametrize("path", [*PAGES, "/static/agentdex.css", "/static/agentdex.js", "/static/nope.css"])
def test_every_web_response_carries_the_security_headers(client, path):
    response = client.get(path)
    policy = response.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["base-uri"] == "'none'"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("path", PAGES)
def test_pages_hold_no_inline_code(client, path):
    doc = page(client.get(path).data)
    assert inline_code(doc) == []
    assert [s["src"] for s in doc.all("script")] == ["/static/agentdex.js"]
    assert [s["href"] for s in doc.all("link", rel="stylesheet")] == ["/static/agentdex.css"]


def test_a_missing_page_is_an_html_404_and_the_api_keeps_its_envelope(client):
    missing = client.get("/nope")
    assert (missing.status_code, missing.mimetype) == (404, "text/html")
    doc = page(missing.data)
    assert doc.one("h1").text() == "Not found (404)"
    assert [a["href"] for a in doc.one("main").all("a")] == ["/"]
    api = client.get("/v1/nope")
    assert (api.status_code, api.mimetype) == (404, "application/json")
    assert api.get_json()["error"]["code"] == "not_found"
    assert client.get("/.well-known/nope").mimetype == "application/json"
    # A client that asks for JSON gets JSON anywhere; a write to a page is refused in the API's terms.
    assert client.get("/nope", headers={"Accept": "application/json"}).mimetype == "application/json"
    refused = client.post("/")
    assert (refused.status_code, refused.mimetype) == (405, "application/json")
    assert set(refused.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "q",
                    "sort",
                    "tag",
                    "host",
                    "input",
                    "output",
                    "cap",
                    "proto",
                    "health",
                    "sig",
                    "cursor",
                    "back",
                    "page",
                    "other",
                ]
            ),
            st.text(st.characters(codec="utf-8"), max_size=40),
        ),
        max_size=6,
    )
)
def test_no_query_string_makes_the_home_page_fail(client, params):
    response = client.get("/", query_string=params)
    assert response.status_code in (200, 400), response.data[:300]
    assert response.mimetype == "text/html"
