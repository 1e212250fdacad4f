"""A real Agentdex on loopback (the app under werkzeug's threaded WSGI server, on the run's test
database, SQLite or PostgreSQL) holding the catalog of tests/browser/catalog.py, and Debian's
Chromium driven by Playwright: one browser for the package (it takes a second to start), a
fresh context and page per test. Every page a test opens is watched: a console error, an
uncaught exception, a Content-Security-Policy violation or a JavaScript dialog fails the test."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Dialog, Page, sync_playwright
from werkzeug.serving import make_server

from registry.container import build_services
from registry.settings import Settings
from tests.browser.catalog import Seeded, seed
from tests.conftest import _clear
from tests.support.a2a_agents import PlainAgent

CHROMIUM = os.environ.get("AGENTDEX_CHROMIUM", "/usr/bin/chromium")
STEP_TIMEOUT_MS = 5_000  # loopback pages answer in milliseconds; a missing element fails fast
DESKTOP = {"width": 1200, "height": 800}
# Watches every document for CSP violations (they are also console errors in Chromium; this
# catches report-only ones and names the directive). Init scripts run outside the page's CSP.
_CSP_WATCH = """document.addEventListener("securitypolicyviolation", (e) =>
  window.__agentdexViolation(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));"""


@dataclasses.dataclass(frozen=True)
class Site:
    base_url: str
    agents: Seeded

    def url(self, path: str) -> str:
        return self.base_url + path


@dataclasses.dataclass
class PageProblems:
    """What went wrong on the pages of one test, as a person at the console would have seen."""

    console_errors: list[str] = dataclasses.field(default_factory=list)
    uncaught: list[str] = dataclasses.field(default_factory=list)
    csp_violations: list[str] = dataclasses.field(default_factory=list)
    dialogs: list[str] = dataclasses.field(default_factory=list)

    def any(self) -> bool:
        return bool(self.console_errors or self.uncaught or self.csp_violations or self.dialogs)


@pytest.fixture(scope="package")
def site(database_url: str) -> Iterator[Site]:
    settings = Settings(
        database_url=database_url,
        secret_key="test-secret-key-0123456789",
        allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
        allow_http=True,
        fetch_timeout=2.0,
    )
    services = build_services(settings)
    _clear(services)
    health_agent = PlainAgent()
    from registry.app import create_app

    server = make_server("127.0.0.1", 0, create_app(services=services), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    try:
        agents = seed(services, health_agent)
        thread.start()
        yield Site(f"http://127.0.0.1:{server.server_port}", agents)
    finally:
        server.shutdown()
        server.server_close()
        health_agent.stop()
        services.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is None:
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (.ci/run does), or set AGENTDEX_CHROMIUM")
    with sync_playwright() as playwright:
        # Chromium will not start as root with its sandbox on (CI runs as root); anyone else keeps it.
        sandbox = os.geteuid() != 0
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, chromium_sandbox=sandbox)
        yield browser
        browser.close()


def open_context(browser: Browser, problems: PageProblems, **options: object) -> BrowserContext:
    """A fresh browser profile whose pages report their problems into `problems`."""
    context = browser.new_context(**{"viewport": DESKTOP, **options})  # type: ignore[arg-type]
    context.set_default_timeout(STEP_TIMEOUT_MS)
    context.expose_function("__agentdexViolation", lambda found: problems.csp_violations.append(found))
    context.add_init_script(_CSP_WATCH)

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.console_errors.append(f"{message.text} ({message.location.get('url')})")

    def dialog(shown: Dialog) -> None:
        problems.dialogs.append(f"{shown.type}: {shown.message}")
        shown.dismiss()

    context.on("console", console)
    context.on("page", lambda page: page.on("pageerror", lambda error: problems.uncaught.append(str(error))))
    context.on("dialog", dialog)
    return context


@pytest.fixture
def problems() -> PageProblems:
    return PageProblems()


@pytest.fixture
def context(browser: Browser, problems: PageProblems) -> Iterator[BrowserContext]:
    context = open_context(browser, problems)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext, problems: PageProblems) -> Iterator[Page]:
    """A page in a fresh profile (1200×800, light scheme); the test fails if anything on it
    logged an error, broke the CSP or opened a dialog."""
    page = context.new_page()
    yield page
    assert not problems.any(), f"the pages reported problems: {problems}"
