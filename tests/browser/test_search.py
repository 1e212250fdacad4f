"""The home page as a person uses it: type words and see the agent they meant, tick a facet and see
the list narrow (and the address change, so it can be shared), open an agent, come back to the
same results, all of it with the keyboard alone too."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.catalog import BULK
from tests.browser.conftest import Site

RESULT_LINKS = ".result-list h3 a"
PAGE_SIZE = 20


def result_names(page: Page) -> list[str]:
    return page.locator(RESULT_LINKS).all_inner_texts()


def search(page: Page, site: Site, words: str) -> None:
    page.goto(site.url("/"))
    page.get_by_role("searchbox", name="Search agents").fill(words)
    page.get_by_role("button", name="Search", exact=True).click()


def test_searching_by_words_shows_the_matching_agent_first(page: Page, site: Site) -> None:
    search(page, site, "currency")
    expect(page).to_have_url(re.compile(r"[?&]q=currency\b"))
    expect(page.locator(RESULT_LINKS).first).to_have_text("Currency Converter")
    assert "Travel Planner" not in result_names(page)
    expect(page.get_by_role("searchbox", name="Search agents")).to_have_value("currency")


def test_a_facet_narrows_the_list_and_the_address_says_so(page: Page, site: Site) -> None:
    page.goto(site.url("/?q=quotes currency translator"))
    expect(page.locator(RESULT_LINKS)).to_have_count(3)
    tags = page.locator("#facet-tag")
    expect(tags.get_by_text("finance")).to_be_visible()
    expect(tags.locator("label", has_text="finance")).to_contain_text("2")  # its count
    tags.get_by_label(re.compile(r"^finance\b")).click()  # the page's script submits the change
    expect(page).to_have_url(re.compile(r"[?&]tag=finance\b"))
    expect(page.locator(RESULT_LINKS)).to_have_count(2)
    assert sorted(result_names(page)) == ["Currency Converter", "Stock Quotes"]
    expect(page.locator("#result-count")).to_have_text("2 agents found.")
    expect(page.get_by_role("link", name=re.compile("Remove filter .*finance"))).to_be_visible()
    expect(tags.get_by_label(re.compile(r"^finance\b"))).to_be_focused()  # a keyboard user stays where they were


def test_a_shared_address_opens_the_same_search(page: Page, site: Site) -> None:
    page.goto(site.url("/?q=stock&tag=finance"))
    expect(page.get_by_role("searchbox", name="Search agents")).to_have_value("stock")
    expect(page.locator("#facet-tag").get_by_label(re.compile(r"^finance\b"))).to_be_checked()
    expect(page.locator(RESULT_LINKS).first).to_have_text("Stock Quotes")


def test_opening_an_agent_and_going_back_shows_the_same_results(page: Page, site: Site) -> None:
    search(page, site, "travel")
    results = result_names(page)
    assert results[0] == "Travel Planner"
    page.locator(RESULT_LINKS).first.click()
    expect(page).to_have_url(site.url(f"/agents/{site.agents.versioned}"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Travel Planner")
    page.go_back()
    expect(page).to_have_url(re.compile(r"[?&]q=travel\b"))
    expect(page.get_by_role("searchbox", name="Search agents")).to_have_value("travel")
    assert result_names(page) == results


def focused(page: Page) -> dict[str, str]:
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return {tag: e.tagName, id: e.id, href: e.getAttribute('href') || '', text: e.innerText || ''}; }"
    )


def tab_until(page: Page, wanted: str, most: int = 60) -> dict[str, str]:
    """Press Tab until the focused element matches the CSS selector `wanted`; fails after `most`."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", wanted):
            return focused(page)
    raise AssertionError(f"{most} presses of Tab never reached {wanted}; last: {focused(page)}")


def test_the_keyboard_alone_finds_and_opens_an_agent(page: Page, site: Site) -> None:
    page.goto(site.url("/"))
    tab_until(page, "input#q", most=10)
    page.keyboard.type("weather")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]q=weather\b"))
    expect(page.locator(RESULT_LINKS).first).to_be_visible()
    first = tab_until(page, RESULT_LINKS)
    assert first["text"] == "Weather Forecaster" == result_names(page)[0]
    page.keyboard.press("Enter")
    expect(page).to_have_url(site.url(f"/agents/{site.agents.probed}"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Weather Forecaster")
    # A visible focus ring: a keyboard user must see where they are.
    tab_until(page, "a")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), outline


def test_results_come_a_page_at_a_time_and_the_pages_can_be_walked_back(page: Page, site: Site) -> None:
    page.goto(site.url("/?tag=bulk"))
    expect(page.locator("#result-count")).to_have_text(f"{BULK} agents found, page 1.")
    first_page = result_names(page)
    assert len(first_page) == PAGE_SIZE
    page.get_by_role("link", name="Next page").click()
    expect(page.locator("#result-count")).to_have_text(f"{BULK} agents found, page 2.")
    expect(page).to_have_url(re.compile(r"[?&]cursor="))
    second_page = result_names(page)
    assert len(second_page) == BULK - PAGE_SIZE and not set(second_page) & set(first_page)
    assert sorted(first_page + second_page) == [f"Bulk Agent {n:02}" for n in range(1, BULK + 1)]
    page.get_by_role("link", name="Previous page").click()
    expect(page.locator("#result-count")).to_have_text(f"{BULK} agents found, page 1.")
    assert result_names(page) == first_page
    page.go_back()
    expect(page.locator("#result-count")).to_have_text(f"{BULK} agents found, page 2.")
    assert result_names(page) == second_page
