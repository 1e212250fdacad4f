"""The crawl's bounds: the outbound policy (a manifest cannot make the registry call a private
address), nesting depth 4 (AI Catalog ADR-0001), cycles, the entry budget, several versions of one
identifier, and entries of any shape (read, never a crash)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.catalog import CardFetcher
from registry.discovery import manifest_crawling
from registry.discovery.crawl.fetch import CatalogDocument, DocumentFetcher
from registry.discovery.crawl.listed_cards import ListedCards
from registry.discovery.crawl.reader import AgentEntry, Refusal, read_entry
from registry.discovery.crawl.report import CrawlReport
from registry.discovery.crawl.walk import ManifestWalker
from tests.support.ard_publishers import CATALOG, ArdPublisher, entry, serving
from tests.support.cards import make_card


@pytest.fixture
def publisher() -> Iterator[ArdPublisher]:
    yield from serving()


def crawl(client, auth, publisher: ArdPublisher) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = client.post("/v1/agents", json={"url": publisher.domain}, headers=auth)
    assert response.status_code == 201, response.json
    return dict(response.json["manifest"])


def rules(report: dict[str, Any]) -> dict[str, str]:
    return {refusal["identifier"]: refusal["rule"] for refusal in report["refused"]}


def registered(report: dict[str, Any]) -> set[str]:
    return {item["identifier"].rsplit(":", 1)[1] for item in report["registered"]}


def test_entries_pointing_at_addresses_the_operator_did_not_allow_are_refused(client, auth, publisher):
    # The tests allowlist 127.0.0.0/8 only: a private address, the cloud metadata service and
    # IPv6 loopback stay refused, before anything is sent to them.
    cloud = entry(publisher.urn("metadata"), "Metadata", url="http://169.254.169.254/latest/card.json")
    private = entry(publisher.urn("private"), "Private", url="http://10.255.255.1/card.json")
    nested = entry(publisher.urn("inner", "catalog"), "Inner", media_type=CATALOG, url="http://[::1]:9/c.json")
    publisher.publish([cloud, private, nested, publisher.by_url("fine")])
    report = crawl(client, auth, publisher)
    assert registered(report) == {"fine"}
    assert rules(report) == {
        publisher.urn("metadata"): "ard.card-refused",
        publisher.urn("private"): "ard.card-refused",
        publisher.urn("inner", "catalog"): "ard.catalog-refused",
    }
    assert "AGENTDEX_ALLOWED_NETWORKS" in report["refused"][0]["message"]


def test_catalogs_are_read_four_levels_deep(client, auth, publisher):
    below = [publisher.inline("agent5")]
    for level in (5, 4, 3, 2):  # the catalog of level N lists agent N and the catalog of level N + 1
        below = [publisher.inline(f"agent{level - 1}"), publisher.nested(f"level{level}", below)]
    publisher.publish(below)  # the manifest is level 1
    report = crawl(client, auth, publisher)
    assert registered(report) == {"agent1", "agent2", "agent3", "agent4"}
    assert rules(report) == {publisher.urn("level5", "catalog"): "ard.catalog-too-deep"}


def test_a_catalog_that_contains_itself_is_refused_and_a_shared_one_read_once(client, auth, publisher):
    shared = publisher.nested("shared", [publisher.inline("common")])
    loop = entry(publisher.urn("loop", "catalog"), "Loop", media_type=CATALOG, url=publisher.url("/catalogs/a.json"))
    home = entry(
        publisher.urn("home", "catalog"), "Home", media_type=CATALOG, url=publisher.url("/.well-known/ard.json")
    )
    publisher.nested("b", [publisher.inline("bee"), loop, home, shared])
    a = publisher.nested(
        "a",
        [
            publisher.inline("ay"),
            shared,
            entry(publisher.urn("b", "catalog"), "B", media_type=CATALOG, url=publisher.url("/catalogs/b.json")),
        ],
    )
    publisher.publish([a, shared])
    report = crawl(client, auth, publisher)
    assert registered(report) == {"ay", "bee", "common"}
    assert rules(report) == {
        publisher.urn("loop", "catalog"): "ard.catalog-cycle",
        publisher.urn("home", "catalog"): "ard.catalog-cycle",
    }
    assert publisher.seen("/catalogs/shared.json") == 1


def test_inline_nested_catalogs_count_as_levels_too(client, auth, publisher):
    inner = entry(
        publisher.urn("inner", "catalog"), "Inner", media_type=CATALOG, data={"entries": [publisher.inline("deep")]}
    )
    publisher.publish(
        [entry(publisher.urn("outer", "catalog"), "Outer", media_type=CATALOG, data={"entries": [inner]})]
    )
    assert registered(crawl(client, auth, publisher)) == {"deep"}


def test_at_most_the_configured_number_of_entries_is_read(services, actor, publisher):
    limited = dataclasses.replace(
        services.settings, ard=dataclasses.replace(services.settings.ard, crawl_max_entries=3)
    )
    crawling = manifest_crawling(limited, services.engine, services.http, services.catalog)
    publisher.publish([publisher.inline(f"a{i}", card=make_card(f"A{i}")) for i in range(5)])
    report = crawling.domains.register(actor, publisher.domain).manifest
    assert report is not None and len(report.registered) == 3 and not report.complete
    assert [r.rule for r in report.refused] == ["ard.too-many-entries"]


def test_of_several_versions_of_one_identifier_the_latest_is_registered(client, auth, publisher):
    old = publisher.inline("multi", card=make_card("Multi v1"), version="1.0.0", updatedAt="2026-01-01T00:00:00Z")
    new = publisher.inline("multi", card=make_card("Multi v2"), version="2.0.0", updatedAt="2026-05-01T00:00:00Z")
    twin = publisher.inline("multi", card=make_card("Multi twin"), version="2.0.0")
    publisher.publish([old, new, twin])
    report = crawl(client, auth, publisher)
    agents = client.get("/v1/agents").json["items"]
    assert [a["name"] for a in agents] == ["Multi v2"]
    assert (report["ignored"], rules(report)) == (1, {publisher.urn("multi"): "ard.duplicate-identifier"})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)
ENTRY_KEYS = st.sampled_from(
    ["identifier", "displayName", "type", "mediaType", "url", "data", "trustManifest", "version"]
)
ENTRIES = st.dictionaries(ENTRY_KEYS, JSON | st.just("urn:air:127.0.0.1:agent:x") | st.just(CATALOG), max_size=7)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ENTRIES | JSON, max_size=6))
def test_entries_of_any_shape_are_read_or_refused_never_a_crash(entries):
    for position, raw in enumerate(entries):
        read = read_entry(raw, "https://site.example/.well-known/ard.json", position)
        if isinstance(read, Refusal):
            assert read.rule.startswith("ard.") and read.message
        if isinstance(read, AgentEntry):
            assert (read.url is None) != (read.data is None)


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRIES | JSON, max_size=6))
def test_a_walk_of_inline_catalogs_of_any_shape_ends(entries):
    nested = {
        "identifier": "urn:air:site.example:catalog:n",
        "displayName": "N",
        "type": CATALOG,
        "data": {"entries": entries},
    }
    root = CatalogDocument("https://site.example/.well-known/ard.json", {"entries": [*entries, nested]})
    walk = ManifestWalker(None, max_depth=4, max_entries=50).walk(root)  # type: ignore[arg-type]  # inline only
    assert walk.listed >= len(walk.agents)


EXAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "spec" / "ard" / "ard-spec-v0.9" / "conformance"


@pytest.mark.parametrize("path", sorted((EXAMPLES / "examples").glob("*/*.json")), ids=lambda p: p.parent.name)
def test_the_upstream_conformance_manifests_are_read_without_a_refusal(path):
    # ARD's own example manifests (ards-project/ard-spec, v0.9): agents by URL with did:web trust
    # manifests, MCP servers by URL and inline, a nested catalog. Nothing in them is refused.
    document = json.loads(path.read_text())
    kinds = [
        type(read_entry(raw, "https://example.com/.well-known/ard.json", i)).__name__
        for i, raw in enumerate(document["entries"])
    ]
    assert "Refusal" not in kinds
    expected = {"application/a2a-agent-card+json": "AgentEntry", CATALOG: "CatalogEntry"}
    assert kinds == [expected.get(raw["type"], "OtherEntry") for raw in document["entries"]]


def test_cards_that_answer_too_slowly_are_refused_when_the_crawls_time_is_up(services, actor, publisher):
    slow, quick = publisher.by_url("slow"), publisher.by_url("quick")
    publisher.slow["/agents/slow.json"] = 1.5
    cards = ListedCards(services.catalog, CardFetcher(services.http), time_limit=0.5)
    report = CrawlReport(publisher.url("/.well-known/ard.json"), "well-known")
    entries = [read_entry(raw, report.url, i) for i, raw in enumerate([slow, quick])]
    placed: list[Any] = []
    cards.register(actor, [(e, e.url) for e in entries if isinstance(e, AgentEntry) and e.url], report, placed.extend)
    assert [named["identifier"] for named in report.registered] == [publisher.urn("quick")]
    assert [(r.identifier, r.rule) for r in report.refused] == [(publisher.urn("slow"), "ard.crawl-time-limit")]


def test_catalogs_that_answer_too_slowly_leave_the_walk_incomplete(services, publisher):
    slow = [publisher.nested(f"slow{n}", [publisher.inline(f"s{n}")]) for n in range(12)]
    for n in range(12):
        publisher.slow[f"/catalogs/slow{n}.json"] = 0.6
    documents = DocumentFetcher(services.http)
    walker = ManifestWalker(documents, max_depth=4, max_entries=100, time_limit=0.3)
    walk = walker.walk(CatalogDocument(publisher.url("/.well-known/ard.json"), {"entries": slow}))
    late = [r for r in walk.refused if r.rule == "ard.crawl-time-limit"]
    assert late and not walk.complete  # nothing is taken as removed after such a walk
    assert len(late) + len(walk.agents) == 12
