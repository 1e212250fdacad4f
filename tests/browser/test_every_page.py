"""Every page, opened as a person would: without a console error or a Content-Security-Policy
violation (the `page` fixture fails the test on either), in the theme the system asks for, and
readable on a phone without scrolling sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import PageProblems, Site, open_context

PHONE = {"width": 375, "height": 740}


def pages(site: Site) -> dict[str, str]:
    agents = site.agents
    return {
        "home": "/",
        "search with facets": "/?q=finance&tag=finance&cap=streaming",
        "no match": "/?q=zzzyzzx",
        **{f"agent {name}": f"/agents/{getattr(agents, name)}" for name in ("signed", "probed", "versioned", "evil")},
        "tags": "/tags",
        "status": "/status",
    }


PAGE_NAMES = ["home", "search with facets", "no match", "agent signed", "agent probed", "agent versioned"]
PAGE_NAMES += ["agent evil", "tags", "status"]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_the_page_opens_without_errors_and_has_one_main_heading(page: Page, site: Site, name: str) -> None:
    response = page.goto(site.url(pages(site)[name]))
    assert response is not None and response.status == 200
    policy = response.headers.get("content-security-policy")
    assert policy and "unsafe-inline" not in policy, policy
    expect(page.get_by_role("main")).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    page.wait_for_load_state("load")  # the scripts ran and the images (if any) loaded, or failed


def test_an_unknown_agent_gets_a_page_that_says_so(page: Page, site: Site, problems: PageProblems) -> None:
    response = page.goto(site.url("/agents/00000000-0000-0000-0000-000000000000"))
    assert response is not None and response.status == 404
    assert response.headers["content-type"].startswith("text/html")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="Search")).to_be_visible()  # a way back into the catalog
    # Chromium logs every 404 document as a console error; that one is the point of this test.
    problems.console_errors[:] = [e for e in problems.console_errors if "status of 404" not in e]


def background(browser: Browser, site: Site, scheme: str) -> tuple[int, ...]:
    problems = PageProblems()
    context = open_context(browser, problems, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(site.url("/"))
        colour = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    finally:
        context.close()
    assert not problems.any(), problems
    channels = re.findall(r"[\d.]+", colour)
    assert len(channels) >= 3 and (len(channels) == 3 or float(channels[3]) > 0), f"no background: {colour}"
    return tuple(round(float(c)) for c in channels[:3])


def brightness(rgb: tuple[int, ...]) -> float:
    return (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255


def test_the_theme_follows_the_system_setting(browser: Browser, site: Site) -> None:
    light, dark = background(browser, site, "light"), background(browser, site, "dark")
    assert brightness(light) > 0.8, light
    assert brightness(dark) < 0.2, dark


@pytest.mark.parametrize("name", ["search with facets", "agent probed", "agent evil", "tags", "status"])
def test_a_phone_reads_the_page_without_scrolling_sideways(browser: Browser, site: Site, name: str) -> None:
    problems = PageProblems()
    context = open_context(browser, problems, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(site.url(pages(site)[name]))
        widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        expect(page.get_by_role("heading", level=1)).to_be_in_viewport()
    finally:
        context.close()
    assert widths[0] <= widths[1] <= PHONE["width"], f"{name}: {widths[0]} px wide on a {widths[1]} px screen"
    assert not problems.any(), problems
