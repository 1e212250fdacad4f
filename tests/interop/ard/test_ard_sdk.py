"""ard-sdk 0.5.0, an independent ARD client, against a running Agentdex: its discovery finds the
registry's manifest at the well-known URI, resolves the nested pages, and its client searches,
pages, explores and lists without refusing anything the registry sent."""

from __future__ import annotations

from typing import Any

import pytest

from registry.discovery import agent_identifier
from tests.support.ard_peers import AGENTS, HOST, ard_sdk_client

BASE = f"https://{HOST}"
AGENT_URNS = [agent_identifier(f"https://{host}/.well-known/agent-card.json") for host in AGENTS]
CURRENCY = "convert euros to japanese yen"
BROAD = "agents for finance, travel, documents or weather"


@pytest.fixture
def report(ard_registry: int) -> dict[str, Any]:
    seen = ard_sdk_client(HOST, ard_registry, CURRENCY, BROAD)
    assert "error" not in seen, seen
    return seen


def test_ard_sdk_discovers_the_registry_and_resolves_every_agent(report: dict[str, Any]) -> None:
    manifests = {manifest["url"]: manifest for manifest in report["manifests"]}
    # Both well-known URIs (ARD v0.91 §5.1 and the v0.9 one it falls back to) serve the manifest.
    assert set(manifests) == {f"{BASE}/.well-known/ard.json", f"{BASE}/.well-known/ai-catalog.json"}
    current, legacy = manifests[f"{BASE}/.well-known/ard.json"], manifests[f"{BASE}/.well-known/ai-catalog.json"]
    assert current["mechanism"] == "well-known"
    assert current["skipped"] == [] and current["errors"] == []
    assert legacy["entries"] == current["entries"]
    assert report["registries"] == [f"{BASE}/ard"]
    resolved = report["resolved"]
    assert resolved["errors"] == [] and resolved["complete"]
    found = [urn for urn, kind in resolved["entries"] if kind == "application/a2a-agent-card+json"]
    assert sorted(found) == sorted(AGENT_URNS)  # every agent once, across the nested pages


def test_ard_sdk_searches_and_pages_through_agentdex(report: dict[str, Any]) -> None:
    assert report["search"][CURRENCY]["pages"][0][0] == AGENT_URNS[0]  # the currency agent, best first
    broad = report["search"][BROAD]
    hits = [urn for page in broad["pages"] for urn in page]
    assert len(broad["pages"]) >= 2 and all(len(page) <= 2 for page in broad["pages"])
    assert len(hits) == len(set(hits))  # no agent twice across pages
    for searched in report["search"].values():
        assert all(0 <= score <= 100 for score in searched["scores"])
        assert all(source.startswith(BASE) for source in searched["sources"])


def test_ard_sdk_explores_and_lists_agentdex(report: dict[str, Any]) -> None:
    assert report["supports"] == {"explore": True, "list": True}
    assert dict(report["explore"]["publisher"]) == {urn.split(":")[2]: 1 for urn in AGENT_URNS}
    assert dict(report["explore"]["tags"])["finance"] == 2
    listed = [urn for page in report["list"]["pages"] for urn in page]
    assert listed == AGENT_URNS and len(report["list"]["pages"]) == 3
