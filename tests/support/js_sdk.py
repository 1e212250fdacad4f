"""The official A2A JavaScript SDK (`@a2a-js/sdk`, npm) as a peer: `tests/interop/js/a2a_card.mjs`
signs cards and verifies signatures with it, run by Node.js. Its packages are installed by
`bash tests/interop/install` (the README's test command and `.ci/run` run it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from signing import SigningKey, private_jwk

PEER = Path(__file__).resolve().parents[1] / "interop" / "js"


def _node(*args: str, files: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None or not (PEER / "node_modules" / "@a2a-js" / "sdk").is_dir():
        pytest.fail("the JavaScript SDK peer is not installed: run `bash tests/interop/install` (needs Node.js)")
    with tempfile.TemporaryDirectory() as tmp:
        paths = {name: Path(tmp) / f"{name}.json" for name in files}
        for name, value in files.items():
            paths[name].write_text(json.dumps(value))
        argv = [str(paths[a]) if a in paths else a for a in args]
        return subprocess.run([node, str(PEER / "a2a_card.mjs"), *argv], capture_output=True, text=True, timeout=60)


def js_signed(card: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """`card` signed by the JS SDK's `generateAgentCardSignature` (header alg, kid, typ JOSE)."""
    done = _node("sign", "card", "jwk", key.kid, key.algorithm.value, files={"card": card, "jwk": private_jwk(key)})
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def js_verifies(card: dict[str, Any], jwks: dict[str, Any]) -> bool:
    """Whether the JS SDK's `verifyAgentCardSignature` accepts `card` with keys from `jwks` only."""
    done = _node("verify", "card", "jwks", files={"card": card, "jwks": jwks})
    assert done.returncode in (0, 1), done.stderr
    return done.returncode == 0


def js_payloads(cards: list[dict[str, Any]]) -> list[bytes]:
    """The payload the JS SDK signs and verifies for each card (`canonicalizeAgentCard`)."""
    done = _node("canonicalize", "cards", files={"cards": cards})
    assert done.returncode == 0, done.stderr
    return [payload.encode("utf-8") for payload in json.loads(done.stdout)]
