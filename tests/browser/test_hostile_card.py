"""A card written to attack the people who browse the catalog renders inert: its markup is text
on the screen, nothing runs (the `page` fixture fails a test on any dialog, console error or CSP
violation), and its `javascript:` documentation URL is not a link."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.catalog import EVIL_DOCS, EVIL_NAME, EVIL_SKILL
from tests.browser.conftest import PageProblems, Site


def assert_inert(page: Page, problems: PageProblems) -> None:
    assert problems.dialogs == []
    expect(page.locator("img[src='x'], [onerror]")).to_have_count(0)
    expect(page.locator("a[href^='javascript:' i]")).to_have_count(0)
    expect(page.locator("script:not([src])")).to_have_count(0)  # no inline script made it into the page


def test_the_hostile_card_in_the_results_shows_its_name_as_text(page: Page, site: Site, problems: PageProblems) -> None:
    page.goto(site.url("/?tag=hostile"))
    result = page.locator(".result-list h3 a")
    expect(result).to_have_count(1)
    expect(result).to_have_text(EVIL_NAME)
    expect(page.locator(".result-list .description")).to_contain_text(EVIL_SKILL)
    assert_inert(page, problems)


def test_the_hostile_agents_page_renders_inert(page: Page, site: Site, problems: PageProblems) -> None:
    page.goto(site.url(f"/agents/{site.agents.evil}"))
    expect(page.get_by_role("heading", level=1)).to_have_text(EVIL_NAME)
    expect(page).to_have_title(f"{EVIL_NAME} · Agentdex")
    expect(page.locator("#skills")).to_contain_text(EVIL_SKILL)
    expect(page.get_by_text(EVIL_DOCS).first).to_be_visible()  # shown, as text
    expect(page.get_by_role("link", name=EVIL_DOCS)).to_have_count(0)
    expect(page.locator("#card-json")).to_contain_text(EVIL_NAME)
    assert_inert(page, problems)


def test_links_taken_from_cards_are_marked_as_untrusted(page: Page, site: Site) -> None:
    page.goto(site.url(f"/agents/{site.agents.signed}"))
    link = page.get_by_role("link", name="https://example.com")  # the card's provider URL
    expect(link.first).to_have_attribute("rel", "noopener noreferrer nofollow")
