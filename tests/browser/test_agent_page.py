"""An agent's page as a person reads it: the health chart drawn from the retained checks, the
signature in words, the version history, and the copy button that puts an interface's URL on the
clipboard."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.catalog import PROBES
from tests.browser.conftest import Site

# The chart's marks a person can see: drawn with a size, not hidden, with their colour.
MARKS = """(elements) => elements.map((e) => ({box: e.getBoundingClientRect(), style: getComputedStyle(e)}))
  .filter(({box, style}) => (box.width > 0 || box.height > 0) && style.visibility !== "hidden" && style.display !== "none")
  .map(({style}) => ({fill: style.fill, stroke: style.stroke}))"""


def test_the_health_chart_is_drawn_with_a_mark_for_the_checks(page: Page, site: Site) -> None:
    page.goto(site.url(f"/agents/{site.agents.probed}"))
    health = page.locator("#health")
    expect(health.get_by_role("heading", name="Health")).to_be_visible()
    chart = health.locator("svg").first
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 50
    marks = chart.locator("rect, circle, path, polyline, line").evaluate_all(MARKS)
    assert len(marks) >= 2, marks
    fills = {mark["fill"] for mark in marks} - {"none"}
    assert len(fills) >= 2, f"up and down checks look alike: {fills}"  # a down stretch was seeded
    expect(health.locator("figure")).to_contain_text(f"{PROBES} checks")
    expect(health).to_contain_text("Uptime")


def test_an_agent_never_probed_says_so_rather_than_drawing_nothing(page: Page, site: Site) -> None:
    page.goto(site.url(f"/agents/{site.agents.translator}"))
    expect(page.locator("#health")).to_contain_text("no checks yet")


def test_the_signature_is_stated_in_words(page: Page, site: Site) -> None:
    page.goto(site.url(f"/agents/{site.agents.signed}"))
    signature = page.locator("#signature")
    expect(signature).to_contain_text("verified")
    expect(signature).to_contain_text("Signed with key")


def test_the_version_history_shows_both_versions_and_what_changed(page: Page, site: Site) -> None:
    page.goto(site.url(f"/agents/{site.agents.versioned}"))
    versions = page.locator("#history li.version")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("(current)")
    expect(versions.first).to_contain_text("description")
    expect(page.locator("#skills")).to_contain_text("hotels")


def test_the_copy_button_puts_the_interface_url_on_the_clipboard(
    context: BrowserContext, page: Page, site: Site
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.base_url)
    page.goto(site.url(f"/agents/{site.agents.probed}"))
    row = page.locator("#interfaces tbody tr").first
    url = row.locator("code").first.inner_text()
    button = row.get_by_role("button", name="Copy")
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == url
