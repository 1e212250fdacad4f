"""The crawl against manifests others make: the test publisher's manifest is valid ARD to
ard-publish (an independent validator), and Agentdex crawls another Agentdex's paged manifest."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry.settings import Settings
from tests.support.ard_peers import ard_publish_validate
from tests.support.ard_publishers import ArdPublisher, serving, standard_manifest
from tests.support.cards import make_card

PAGE = 2


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, ard=dataclasses.replace(settings.ard, manifest_page=PAGE))


@pytest.fixture
def publisher() -> Iterator[ArdPublisher]:
    yield from serving()


def test_the_crawl_tests_manifests_are_valid_ard_to_ard_publish(publisher, tmp_path: Path) -> None:
    # The entries the tests refuse on purpose (both url and data, a squatted identity) and the one
    # in the AI Catalog shape (`mediaType`, which ARD calls `type`) are left out: the rest is ARD.
    on_purpose = (":broken", ":squatter", ":zeta")
    entries = [e for e in standard_manifest(publisher) if not e["identifier"].endswith(on_purpose)]
    documents = {
        "ard.json": {"specVersion": "1.0", "host": {"displayName": "Loopback publisher"}, "entries": entries},
        "team.json": json.loads(publisher.routes["/catalogs/team.json"][2]),
    }
    for name, document in documents.items():
        (tmp_path / name).write_text(json.dumps(document))
        verdict = ard_publish_validate(tmp_path / name)
        assert verdict.returncode == 0 and "valid, publishable" in verdict.stdout, f"{name}: {verdict.stdout}"


def test_agentdex_registers_every_agent_another_agentdex_lists(client, auth, services, actor, registry_url):
    # The registry at `registry_url` publishes its agents two to a nested page. Registering its
    # domain registers its own card (the registry is an A2A agent) and mirrors every agent it lists
    # at the card URL it serves; the manifest's registry entry is not an agent.
    originals = {}
    for n in range(5):
        card = make_card(f"Peer {n}", tags=["peer"])
        originals[f"Peer {n}"] = services.catalog.register_card(actor, card, f"https://peer{n}.internal/card.json")
    response = client.post("/v1/agents", json={"url": registry_url}, headers=auth)
    assert response.status_code == 201, response.json
    report = response.json["manifest"]
    assert report["foundVia"] == "well-known" and report["refused"] == [] and report["complete"]
    assert report["catalogs"] >= 2 and report["ignored"] >= 1  # the pages, the registry's own entry
    listed = client.get("/v1/agents", query_string={"limit": 100}).json["items"]
    mirrors = {agent["cardUrl"]: agent["name"] for agent in listed}
    for name, original in originals.items():
        assert mirrors[f"{registry_url}/v1/agents/{original.agent.id}/card"] == name
    assert len(report["registered"]) >= len(originals)
