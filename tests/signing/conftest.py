"""Fixtures for the signing tests: the shared test vectors and cards, and one key per algorithm
(generated once: RSA-3072 generation takes a while)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from signing import SigningKey, generate_key

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TESTDATA = SHARED / "testdata"
CARD_ALGS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def real_cards() -> list[tuple[str, dict[str, Any]]]:
    """(file name, card) for every real card in ../shared/testdata/cards."""
    index = load_json(TESTDATA / "cards" / "INDEX.json")
    return [(entry["file"], load_json(TESTDATA / "cards" / entry["file"])) for entry in index["cards"]]


@pytest.fixture(scope="session")
def keys() -> dict[str, SigningKey]:
    return {alg: generate_key(alg) for alg in CARD_ALGS}


@pytest.fixture(autouse=True)
def _quiet_sdk_warnings() -> None:
    # a2a-sdk logs a warning for every card missing REQUIRED fields; the tests use fragments on purpose.
    logging.getLogger("a2a").setLevel(logging.ERROR)
