"""Start-up benchmark of the offline commands a release pipeline runs, each a fresh process:
wall time from process start to exit of `agentdex card sign` (a 4 KB card, Ed25519), `card verify`,
`card validate` and `keys jwks`, beside the interpreter's own floor (`python -c pass`).

    python bench/cli_start.py                     # 20 runs of each, interleaved
    python bench/cli_start.py --runs 50

`python bench/signing.py` prints the same rows after the library's. Runs are interleaved
(sign, verify, validate, ... sign, ...) so background load hits every command alike.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import BIN, Table  # noqa: E402

CARD_BYTES = 4096


def make_card(size: int = CARD_BYTES) -> dict[str, object]:
    """A valid v1.0 card whose indented JSON is just over `size` bytes."""
    card: dict[str, object] = {
        "name": "Weather Agent",
        "description": "Forecasts, warnings and climate summaries for any place on Earth.",
        "version": "1.2.0",
        "supportedInterfaces": [
            {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": "Example Org", "url": "https://example.com"},
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [],
    }
    skills: list[dict[str, object]] = card["skills"]  # type: ignore[assignment]
    while len(json.dumps(card, indent=2)) < size:
        n = len(skills)
        skills.append(
            {
                "id": f"forecast-{n}",
                "name": f"Forecast {n}",
                "description": "Hourly and daily forecasts for a place, with confidence bands.",
                "tags": ["weather", "forecast"],
                "examples": ["Will it rain in Zürich tomorrow?"],
            }
        )
    return card


def prepare(workdir: Path) -> dict[str, list[str]]:
    """Write the card, an Ed25519 key, its JWKS and a signed card; the command lines to time."""
    agentdex = str(BIN / "agentdex")
    (workdir / "card.json").write_text(json.dumps(make_card(), indent=2))
    key, jwks, signed = workdir / "key.pem", workdir / "jwks.json", workdir / "signed.json"
    subprocess.run([agentdex, "keys", "generate", "--alg", "EdDSA", "--out", str(key)], check=True, capture_output=True)
    jwks.write_bytes(subprocess.run([agentdex, "keys", "jwks", str(key)], check=True, capture_output=True).stdout)
    sign = [agentdex, "card", "sign", str(workdir / "card.json"), "--key", str(key), "--out", str(signed)]
    subprocess.run(sign, check=True, capture_output=True)
    return {
        "python -c pass (the interpreter's floor)": [sys.executable, "-c", "pass"],
        "agentdex card sign (4 KB card, Ed25519)": sign,
        "agentdex card verify --jwks": [agentdex, "card", "verify", str(signed), "--jwks", str(jwks)],
        "agentdex card validate": [agentdex, "card", "validate", str(workdir / "card.json")],
        "agentdex keys jwks": [agentdex, "keys", "jwks", str(key)],
    }


def measure(table: Table, runs: int) -> None:
    """Add one row per command to `table`: `runs` interleaved runs, wall ms from spawn to exit."""
    with tempfile.TemporaryDirectory() as tmp:
        commands = prepare(Path(tmp))
        latencies: dict[str, list[float]] = {what: [] for what in commands}
        for argv in commands.values():  # warm-up: the page cache and .pyc files
            subprocess.run(argv, check=True, capture_output=True)
        for _ in range(runs):
            for what, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True)
                latencies[what].append((time.perf_counter() - started) * 1000)
        for what, samples in latencies.items():
            table.add(what, len(samples), sum(samples) / 1000, samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    table = Table()
    measure(table, args.runs)
    table.print(
        f"python bench/cli_start.py --runs {args.runs}\n"
        "imports of one command: python -X importtime -c 'from cli.main import cli; cli()' card sign CARD --key KEY"
    )


if __name__ == "__main__":
    main()
