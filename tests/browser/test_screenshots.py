"""The README's screenshots, taken by the tests' browser: the home page with a query and a facet
chosen, and an agent page (its top, then its signature and health chart). Every run takes them
and checks they are small PNGs; they are written into the tree only when asked, so CI's runs
leave tracked files alone:

    AGENTDEX_SCREENSHOTS=docs/screenshots pytest tests/browser/test_screenshots.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site

MAX_BYTES = 150_000
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    asked = os.environ.get("AGENTDEX_SCREENSHOTS")
    folder = Path(asked) if asked else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(page: Page, path: Path) -> None:
    page.evaluate("document.fonts.ready")
    path.write_bytes(page.screenshot(type="png", animations="disabled", caret="hide"))
    data = path.read_bytes()
    assert data.startswith(PNG) and len(data) < MAX_BYTES, f"{path}: {len(data):,} bytes"


def test_screenshots_of_the_home_page_and_an_agent_page(page: Page, site: Site, folder: Path) -> None:
    page.goto(site.url("/?q=finance&tag=finance"))
    expect(page.locator(".result-list h3 a").first).to_be_visible()
    shot(page, folder / "home.png")
    page.goto(site.url(f"/agents/{site.agents.probed}"))
    expect(page.locator("#health svg").first).to_be_visible()
    shot(page, folder / "agent.png")
    page.locator("#signature").evaluate("(section) => section.scrollIntoView()")  # trust and health at a glance
    shot(page, folder / "agent-health.png")
