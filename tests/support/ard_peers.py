"""The third-party ARD peers, run in a Python 3.13 virtualenv of their own (ard-sdk needs ≥ 3.13):
`ard-sdk` (an ARD client, driven by `tests/interop/ard/ard_client.py`) and `ard-publish` (a
manifest validator). `.ci/run` installs them:

    PYENV_VERSION=3.13.0 python3.13 -m venv tests/interop/ard/.venv
    tests/interop/ard/.venv/bin/python -m pip install -r tests/interop/ard/requirements.txt
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

# Not a name reserved for examples (`.test`, `example.com`…), which ard-sdk flags in a published
# manifest; `.internal` is for private names and never resolves on the internet.
HOST = "agentdex.ci.internal"
PEER = Path(__file__).resolve().parents[1] / "interop" / "ard"
VENV = PEER / ".venv" / "bin"
INSTALL = (
    "the ARD peers are not installed: run `PYENV_VERSION=3.13.0 python3.13 -m venv tests/interop/ard/.venv && "
    "tests/interop/ard/.venv/bin/python -m pip install -r tests/interop/ard/requirements.txt` (as .ci/run does)"
)


def _peer(program: str) -> Path:
    path = VENV / program
    if not path.exists():
        pytest.fail(INSTALL)
    return path


def ard_sdk_client(host: str, port: int, *queries: str) -> dict[str, Any]:
    """What ard-sdk saw of the registry on 127.0.0.1:`port` served as https://`host` (see
    `ard_client.py`, searching for each of `queries`): its report, or `{"error": …}` when the SDK
    refused something."""
    done = subprocess.run(
        [str(_peer("python")), str(PEER / "ard_client.py"), host, str(port), *queries],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1) and done.stdout, done.stderr
    return dict(json.loads(done.stdout))


def ard_publish_validate(manifest: Path) -> subprocess.CompletedProcess[str]:
    """`ard-publish validate FILE`: exit 0 and "valid, publishable", or 1 and every problem."""
    return subprocess.run(
        [str(_peer("ard-publish")), "validate", str(manifest)], capture_output=True, text=True, timeout=60
    )


def fetch(port: int, url: str) -> requests.Response:
    """GET `url` (https://HOST/…) from the registry on `port`, as the proxy in front of it would."""
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname) == ("https", HOST), url
    return requests.get(
        f"http://127.0.0.1:{port}{parts.path}", headers={"Host": HOST, "X-Forwarded-Proto": "https"}, timeout=30
    )


def _card(
    name: str, host: str, description: str, skills: list[tuple[str, str, list[str], list[str]]], **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "version": "2.3.0",
        "supportedInterfaces": [{"url": f"https://{host}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "provider": {"organization": name.split()[0], "url": f"https://{host}"},
        "capabilities": {"streaming": extra.get("streaming", False), "pushNotifications": extra.get("push", False)},
        "defaultInputModes": extra.get("inputs", ["text/plain"]),
        "defaultOutputModes": extra.get("outputs", ["text/plain", "application/json"]),
        "skills": [
            {"id": skill_id, "name": skill_name, "description": skill_name, "tags": tags, "examples": examples}
            for skill_id, skill_name, tags, examples in skills
        ],
    }


AGENTS = {
    "fx.acmefx.com": _card(
        "AcmeFX Currency Exchange",
        "fx.acmefx.com",
        "Converts amounts between currencies at live mid-market exchange rates and explains rate moves.",
        [
            (
                "convert",
                "Convert currency",
                ["currency", "finance", "exchange-rates"],
                ["convert 250 euros to japanese yen"],
            ),
            (
                "history",
                "Exchange rate history",
                ["currency", "finance"],
                ["how did the dollar move against the pound this year"],
            ),
        ],
    ),
    "plan.wanderly.travel": _card(
        "Wanderly Trip Planner",
        "plan.wanderly.travel",
        "Plans multi-city trips: flights, trains and hotels within a budget, from a photo of a place or a sentence.",
        [("itinerary", "Build an itinerary", ["travel", "itinerary"], ["plan four days in Lisbon under 900 euros"])],
        inputs=["text/plain", "image/png"],
    ),
    "agents.docsmith.io": _card(
        "Docsmith Summarizer",
        "agents.docsmith.io",
        "Summarizes long documents and contracts into key points, risks and action items.",
        [("summarize", "Summarize a document", ["summarization", "documents"], ["summarize this 40 page contract"])],
        outputs=["text/markdown"],
    ),
    "api.skycast.net": _card(
        "SkyCast Weather",
        "api.skycast.net",
        "Hour-by-hour weather forecasts and severe weather alerts for any place on earth.",
        [("forecast", "Forecast the weather", ["weather", "forecast"], ["will it rain in Oslo tomorrow afternoon"])],
        streaming=True,
    ),
    "invoices.ledgerline.com": _card(
        "Ledgerline Invoices",
        "invoices.ledgerline.com",
        "Reads supplier invoices, checks them against purchase orders and books them.",
        [("book", "Book an invoice", ["finance", "invoices", "accounting"], ["book this invoice from Contoso"])],
        inputs=["application/pdf", "image/jpeg"],
        push=True,
    ),
}
