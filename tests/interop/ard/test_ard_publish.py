"""ard-publish 1.2.1, an independent manifest validator, accepts the manifest a running Agentdex
publishes: the top document and each nested page it links to."""

from __future__ import annotations

from pathlib import Path

from tests.support.ard_peers import HOST, ard_publish_validate, fetch


def test_ard_publish_validates_the_manifest_and_its_pages(ard_registry: int, tmp_path: Path) -> None:
    top = fetch(ard_registry, f"https://{HOST}/.well-known/ard.json")
    assert top.status_code == 200 and top.headers["Content-Type"] == "application/json"
    documents = {"ard.json": top.content}
    for entry in top.json()["entries"]:
        if entry["type"] == "application/ai-catalog+json":
            documents[entry["url"].rsplit("/", 1)[-1] + ".json"] = fetch(ard_registry, entry["url"]).content
    assert len(documents) == 3  # five agents, two to a page
    for name, body in documents.items():
        (tmp_path / name).write_bytes(body)
        verdict = ard_publish_validate(tmp_path / name)
        assert verdict.returncode == 0, f"{name}: {verdict.stdout}"
        assert "valid, publishable" in verdict.stdout
