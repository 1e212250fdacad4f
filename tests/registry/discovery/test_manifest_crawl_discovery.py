"""Finding a domain's manifest (ARD v0.91 §5.1): /.well-known/ard.json, then the legacy
ai-catalog.json, then robots.txt `Agentmap:`, then the home page's `rel="ard"` / `rel="ai-catalog"`
links, each tried against a real loopback domain."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from registry.discovery.crawl.fetch import DocumentFetcher
from registry.discovery.crawl.locate import ManifestLocator, agentmap_urls, html_links
from tests.support.ard_publishers import LEGACY, WELL_KNOWN, ArdPublisher, serving


@pytest.fixture
def publisher() -> Iterator[ArdPublisher]:
    yield from serving()


@pytest.fixture
def locator(services) -> ManifestLocator:  # type: ignore[no-untyped-def]
    return ManifestLocator(DocumentFetcher(services.http))


def registered_via(client, auth, publisher: ArdPublisher) -> tuple[str, str, list[str]]:  # type: ignore[no-untyped-def]
    response = client.post("/v1/agents", json={"url": publisher.domain}, headers=auth)
    assert response.status_code == 201, response.json
    report = response.json["manifest"]
    return report["foundVia"], report["url"], [r["identifier"] for r in report["registered"]]


def test_the_well_known_ard_json_is_read_first(client, auth, publisher):
    publisher.publish([publisher.by_url("new")], path=WELL_KNOWN)
    publisher.publish([publisher.by_url("old")], path=LEGACY)
    assert registered_via(client, auth, publisher) == (
        "well-known",
        publisher.url(WELL_KNOWN),
        [publisher.urn("new")],
    )


def test_without_ard_json_the_legacy_ai_catalog_json_is_read(client, auth, publisher):
    publisher.publish([publisher.by_url("old")], path=LEGACY)
    assert registered_via(client, auth, publisher) == (
        "well-known-legacy",
        publisher.url(LEGACY),
        [publisher.urn("old")],
    )


def test_robots_agentmap_names_the_manifest(client, auth, publisher):
    url = publisher.publish([publisher.by_url("mapped")], path="/ai/entries.json")
    publisher.put_text(
        "/robots.txt", f"User-agent: *\nDisallow: /private\n# Agentmap: /nowhere.json\nAGENTMAP:  {url}\n"
    )
    assert registered_via(client, auth, publisher) == ("agentmap", url, [publisher.urn("mapped")])


def test_an_agentmap_that_leads_nowhere_moves_on_to_the_next(client, auth, publisher):
    url = publisher.publish([publisher.by_url("second")], path="/second.json")
    publisher.put_text("/robots.txt", "Agentmap: /missing.json\nAgentmap: /second.json\n")
    assert registered_via(client, auth, publisher) == ("agentmap", url, [publisher.urn("second")])


def test_the_home_pages_ard_link_wins_over_its_ai_catalog_link(client, auth, publisher):
    publisher.publish([publisher.by_url("legacy")], path="/catalog/legacy.json")
    url = publisher.publish([publisher.by_url("linked")], path="/catalog/ard.json")
    html = """<!doctype html><html><head><title>Acme</title>
      <link rel="stylesheet" href="/site.css">
      <link rel="ai-catalog" href="/catalog/legacy.json" type="application/ai-catalog+json">
      <LINK REL="alternate ARD" HREF="catalog/ard.json">
    </head><body>hello</body></html>"""
    publisher.put_text("/", html, "text/html; charset=utf-8")
    assert registered_via(client, auth, publisher) == ("link", url, [publisher.urn("linked")])


def test_a_link_header_on_the_home_page_is_read(client, auth, publisher):
    url = publisher.publish([publisher.by_url("headed")], path="/catalog/ai.json")
    publisher._put("/", 200, {"Content-Type": "text/plain", "Link": f'<{url}>; rel="ai-catalog"'}, b"welcome")
    assert registered_via(client, auth, publisher) == ("link", url, [publisher.urn("headed")])


def test_every_location_is_tried_in_order_when_there_is_no_manifest(locator, publisher):
    publisher.put_text("/robots.txt", "User-agent: *\n")
    publisher.put_text("/", "<html><head></head></html>", "text/html")
    search = locator.find(publisher.domain)
    assert search.located is None and not search.inconclusive
    paths = [WELL_KNOWN, LEGACY, "/robots.txt", "/"]
    assert list(search.tried) == [publisher.url(path) for path in paths]


def test_a_json_document_without_entries_is_not_a_manifest(locator, publisher):
    publisher.put_json(WELL_KNOWN, {"name": "an Agent Card, not a catalog"})
    publisher.publish([publisher.by_url("legacy")], path=LEGACY)
    search = locator.find(publisher.domain)
    assert search.located is not None and search.located.via == "well-known-legacy"


def test_a_manifest_location_that_fails_makes_the_search_inconclusive(locator, publisher):
    publisher.put_text(WELL_KNOWN, "busy", status=503)
    search = locator.find(publisher.domain)
    assert search.located is None and search.inconclusive


def test_agentmap_lines_are_read_like_robots_fields():
    robots = (
        "user-agent: *\nAgentmap: https://a.example/x.json # the main one\nagentmap:/rel.json\nAgentmap: ftp://b/c\n"
    )
    assert agentmap_urls(robots, "https://site.example/robots.txt") == [
        "https://a.example/x.json",
        "https://site.example/rel.json",
    ]


def test_html_links_honour_base_and_rel_lists():
    html = '<head><base href="https://cdn.example/site/"><link rel="preload ard" href="m.json"><link rel=ai-catalog href=/c.json /></head>'
    assert html_links(html, "https://site.example/") == [
        ("https://cdn.example/site/m.json", "ard"),
        ("https://cdn.example/c.json", "ai-catalog"),
    ]


def test_a_domain_that_does_not_answer_is_not_searched_further(locator):
    with socket.socket() as sock:  # a port nothing listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        domain = f"http://127.0.0.1:{sock.getsockname()[1]}"
    search = locator.find(domain)
    assert search.located is None and search.inconclusive and search.tried == (domain + WELL_KNOWN,)


def test_registering_a_domain_that_does_not_answer_fails_as_before(client, auth):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        domain = f"http://127.0.0.1:{sock.getsockname()[1]}"
    response = client.post("/v1/agents", json={"url": domain}, headers=auth)
    assert response.status_code == 502, response.json
    assert response.json["error"]["code"] == "agent_unreachable"
