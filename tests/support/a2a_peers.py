"""A catalog to search through the registry's own A2A agent, and the A2A clients that search it:
the JavaScript SDK (`tests/interop/js/a2a_find_agents.mjs`, run by Node.js) and the Python SDK of
the 0.3 generation (`tests/interop/a2a03/find_agents.py`, run in the virtualenv beside it, which
`.ci/run` creates). The Python SDK 1.x is a test dependency and is called in-process."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cards import make_card
from tests.support.js_sdk import PEER as JS_PEER

INTEROP = Path(__file__).resolve().parents[1] / "interop"
V03_PEER = INTEROP / "a2a03"
V03_PYTHON = V03_PEER / ".venv" / "bin" / "python"

# name → tags of the agents the A2A tests find.
CATALOG = {
    "Weather Agent": ["weather", "forecast"],
    "Currency Agent": ["currency", "fx"],
    "Translator Agent": ["translation", "language"],
}


def seed_catalog(client: Any, auth: dict[str, str]) -> dict[str, str]:
    """Register the agents of CATALOG (the weather agent streams); their ids by name."""
    ids = {}
    for name, tags in CATALOG.items():
        slug = name.split()[0].lower()
        card = make_card(name, tags=tags, url=f"https://{slug}.example.com/a2a", streaming=name.startswith("Weather"))
        body = {"card": card, "cardUrl": f"https://{slug}.example.com/.well-known/agent-card.json"}
        response = client.post("/v1/agents", json=body, headers=auth)
        assert response.status_code == 201, response.get_json()
        ids[name] = response.get_json()["id"]
    return ids


def js_find_agents(registry_url: str, binding: str, query: str) -> dict[str, Any]:
    """What the JavaScript SDK's client found (see a2a_find_agents.mjs)."""
    node = shutil.which("node")
    if node is None or not (JS_PEER / "node_modules" / "@a2a-js" / "sdk").is_dir():
        pytest.fail("the JavaScript SDK peer is not installed: run `bash tests/interop/install` (needs Node.js)")
    return _json_of([node, str(JS_PEER / "a2a_find_agents.mjs"), registry_url, binding, query])


def v03_find_agents(registry_url: str, query: str) -> dict[str, Any]:
    """What the 0.3 Python SDK's client found (see a2a03/find_agents.py)."""
    if not V03_PYTHON.exists():
        pytest.fail(
            "the A2A 0.3 client is not installed: run `python3 -m venv tests/interop/a2a03/.venv && "
            "tests/interop/a2a03/.venv/bin/pip install -r tests/interop/a2a03/requirements.txt` (as .ci/run does)"
        )
    return _json_of([str(V03_PYTHON), str(V03_PEER / "find_agents.py"), registry_url, query])


def _json_of(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))
