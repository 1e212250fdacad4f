"""The home page (`/`), read as a person reads it: what a search finds, facets whose counts are
those of the agents found, a facet or a tag that narrows, pages that go through every agent once,
and a search it cannot read explained beside the box."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.registry.catalog.varied_catalog import LISTED, register_varied
from tests.registry.web.page_tree import Node, page
from tests.support.cards import make_card


@pytest.fixture
def ids(services, actor) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return register_varied(services, actor)


def open_page(client, url: str, status: int = 200) -> Node:  # type: ignore[no-untyped-def]
    response = client.get(url)
    assert response.status_code == status, response.data[:500]
    assert response.mimetype == "text/html"
    return page(response.data)


def names(doc: Node) -> list[str]:
    return [heading.text() for heading in doc.one(id="results").all("h3")]


def facet(doc: Node, kind: str) -> dict[str, int]:
    """The facet's choices as the page shows them: value → the count beside it."""
    group = doc.one("fieldset", id=f"facet-{kind}")
    return {box["value"] or "": _count(label) for box, label in _choices(group)}


def _count(label: Node) -> int:
    return int(label.one("span", class_="count").text().split()[0])


def _choices(group: Node) -> list[tuple[Node, Node]]:
    return [(item.one("input"), item.one("label")) for item in group.all("li")]


def submitted(doc: Node, **checked: str) -> str:
    """The URL the search form sends with the box as it is and these checkboxes ticked (besides
    those already ticked), as a browser builds it."""
    form = doc.one("form", id="search")
    params = [("q", doc.one("input", id="q")["value"] or "")]
    for box in doc.all("input", type="checkbox", form="search"):
        if "checked" in box.attrs or checked.get(box["name"] or "") == box["value"]:
            params.append((box["name"] or "", box["value"] or ""))
    return (form["action"] or "") + "?" + "&".join(f"{name}={value}" for name, value in params)


def link(doc: Node, text: str) -> str:
    found = [a["href"] for a in doc.all("a") if a.text() == text]
    assert len(found) == 1, f"{len(found)} links {text!r}"
    return found[0] or ""


def test_the_home_page_lists_what_the_default_search_finds(client, ids):
    doc = open_page(client, "/")
    assert names(doc) == LISTED  # registration order; neither the deprecated agent nor the dead one
    assert doc.one(id="result-count").text() == "6 agents found."
    assert doc.one("title").text() == "Find A2A agents (6 agents) · Agentdex"  # announced first
    alpha = doc.one(id="results").all("li", class_="result")[0]
    assert alpha.one("h3").one("a")["href"] == f"/agents/{ids['Alpha Weather']}"
    assert [badge.text() for badge in alpha.all(class_="badge")] == ["Up", "Unsigned"]
    assert alpha.one(class_="provider").text() == "by Example Org"
    assert alpha.one(class_="protocols").text() == "A2A 1.0"
    assert [tag.text() for tag in alpha.one("ul", class_="tags").all("a")] == [
        "red",
        "weather",
    ]  # as the profile lists them


def test_words_find_the_agents_that_hold_them(client, ids):
    doc = open_page(client, "/?q=weather&sort=words")
    assert set(names(doc)) == {"Alpha Weather", "Beta Weather", "Legacy Weather"}
    assert [o["value"] for o in doc.one("select", id="sort").all("option") if "selected" in o.attrs][0] == "words"
    assert doc.one("input", id="q")["value"] == "weather"


def test_shorthands_filter_as_the_api_does(client, ids):
    assert names(open_page(client, "/?q=tag:maps")) == ["Gamma Maps", "Delta Maps"]
    assert names(open_page(client, "/?q=input:image/png")) == ["Epsilon Travel"]
    assert names(open_page(client, "/?q=cap:streaming health:up")) == ["Alpha Weather"]
    assert names(open_page(client, "/?q=mode:image/png")) == []  # accepts and produces it: none does
    assert names(open_page(client, "/?q=status:deprecated")) == ["Zeta Travel"]
    assert set(names(open_page(client, "/?q=proto:0.3"))) == {"Legacy Weather"}


def test_facet_counts_are_those_of_the_agents_found(client, ids):
    doc = open_page(client, "/?q=tag:weather")
    found = doc.one(id="results").all("li", class_="result")
    assert [card.one("h3").text() for card in found] == ["Alpha Weather", "Beta Weather", "Legacy Weather"]
    tags_shown = [tag.text() for card in found for tag in card.one("ul", class_="tags").all("a")]
    assert facet(doc, "tag") == {tag: tags_shown.count(tag) for tag in set(tags_shown)}
    health_shown = [card.all(class_="badge")[0].text() for card in found]
    assert facet(doc, "health") == {"up": 1, "degraded": 1, "unknown": 1}
    assert sorted(health_shown) == ["Degraded", "Health unknown", "Up"]
    assert facet(doc, "host") == {"alpha.example.com": 1, "beta.example.com": 1, "legacy.example.org": 1}
    assert facet(doc, "proto") == {"1.0": 2, "0.3": 1}  # major.minor only ("0.3.0" is the same agent)
    assert facet(doc, "sig") == {"unsigned": 3}


def test_a_facet_narrows_and_its_chip_takes_it_away(client, ids):
    home = open_page(client, "/")
    red_url = submitted(home, tag="red")
    assert dict(parse_qsl(urlsplit(red_url).query, keep_blank_values=True)) == {"q": "", "tag": "red"}
    red = open_page(client, red_url)
    assert names(red) == ["Alpha Weather", "Gamma Maps"]
    assert "checked" in red.one("input", type="checkbox", name="tag", value="red").attrs
    assert facet(red, "health") == {"up": 1, "down": 1}
    # Values of one facet are ORed, facets ANDed.
    red_or_blue = open_page(client, "/?tag=red&tag=blue")
    assert names(red_or_blue) == ["Alpha Weather", "Beta Weather", "Gamma Maps", "Delta Maps"]
    assert names(open_page(client, submitted(red_or_blue, health="up"))) == ["Alpha Weather"]
    assert names(open_page(client, link(red, "Tags: red ×"))) == LISTED


def test_a_tag_on_a_result_narrows_the_search_to_it(client, ids):
    doc = open_page(client, "/?q=cap:push")
    gamma = doc.one(id="results").one("li", class_="result")
    maps = next(a["href"] for a in gamma.one("ul", class_="tags").all("a") if a.text() == "maps")
    assert names(open_page(client, maps or "")) == ["Gamma Maps"]
    assert dict(parse_qsl(urlsplit(maps).query)) == {"q": "cap:push", "tag": "maps"}


def test_pages_go_through_every_agent_once_by_cursor(client, services, actor):
    for number in range(45):
        card = make_card(f"Pager {number:02d}", tags=["paging"], description=f"paging agent number {number}")
        services.catalog.register_card(actor, card, f"https://pager{number}.example.com/card.json")
    for url in ("/?tag=paging", "/?q=paging&sort=words"):
        seen, pages, doc = [], [], open_page(client, url)
        while True:
            seen.extend(names(doc))
            pages.append(doc)
            nxt = [a["href"] for a in doc.all("a", rel="next")]
            if not nxt:
                break
            assert "offset" not in (nxt[0] or "") and "cursor=" in (nxt[0] or "")
            doc = open_page(client, nxt[0] or "")
        assert sorted(seen) == [f"Pager {number:02d}" for number in range(45)]
        assert [len(names(p)) for p in pages] == [20, 20, 5]
        assert pages[2].one(id="result-count").text() == "45 agents found, page 3."
        back = open_page(client, link(pages[2], "Previous page"))
        assert names(back) == names(pages[1])
        assert names(open_page(client, link(back, "Previous page"))) == names(pages[0])
        assert names(open_page(client, link(pages[2], "First page"))) == names(pages[0])


def test_a_search_it_cannot_read_is_explained_beside_the_box(client, ids):
    doc = open_page(client, "/?q=tag:", status=400)
    assert doc.one(id="q-error").text() == "This search could not be read: tag: needs a value (for example tag:weather)"
    assert doc.one("input", id="q")["value"] == "tag:"
    assert "q-error" in (doc.one("input", id="q")["aria-describedby"] or "")
    assert names(doc) == []
    unknown = open_page(client, "/?health=sleepy", status=400)
    assert "health is one of up, degraded, down, unknown" in unknown.one(id="q-error").text()


def test_the_page_has_the_landmarks_the_browser_tests_rely_on(client, ids):
    doc = open_page(client, "/?q=weather&tag=weather")
    assert doc.one("form", id="search")["role"] == "search"
    assert doc.one("form", id="search")["method"] == "get"
    assert doc.one("label", for_="q").text() == "Search agents"
    assert doc.one("input", id="q")["type"] == "search"
    assert doc.one("main", id="main") and doc.one("section", id="results")
    legends = [group.one("legend").text() for group in doc.all("fieldset", class_="facet")]
    assert legends[:2] == ["Tags", "Provider (card host)"]
    assert [h.tag for h in doc.walk() if h.tag in ("h1", "h2", "h3")][:3] == ["h1", "h2", "h2"]
    nav = doc.one("nav", aria_label="Site")
    assert [(a.text(), a["aria-current"]) for a in nav.all("a")] == [
        ("Search", "page"),
        ("Tags", None),
        ("Status", None),
    ]
