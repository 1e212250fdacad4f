"""Validation benchmark: what `validate_card` costs per card, as the API calls it (`raw_size` given).

    python bench/validation.py                                 # 500 generated v1.0 cards
    python bench/validation.py ../shared/testdata/cards/a2a-*.json --calls 3000

Rows: the generated cards together (realistic v1.0 cards of 1–9 skills, as `bench/catalog.py`
registers them), then each CARD file given, with its size, detected version and verdict. Every
call is timed with the thread's CPU clock, so that other processes on the shared machine inflate
the figures less than wall-clock time would: the rate is calls per CPU second of one core, p50
and p99 are per call. Registration must afford 1,000 cards/s through the HTTP API on 2 cores, so
validation should stay well under 0.5 ms for a typical 2–8 KB card.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catalog import make_card  # noqa: E402
from bench.common import Table  # noqa: E402
from registry.validation import validate_card  # noqa: E402


def time_calls(cards: list[tuple[Any, int]], calls: int) -> tuple[float, list[float]]:
    """(CPU seconds, per-call milliseconds) of `calls` validations, going round `cards` (each a
    parsed card and its size in bytes), after one warm-up round (schemas compile on first use)."""
    for card, raw_size in cards:
        validate_card(card, raw_size=raw_size)
    latencies = []
    gc.disable()  # a collection inside one call is noise, not validation cost
    try:
        for n in range(calls):
            card, raw_size = cards[n % len(cards)]
            start = time.thread_time_ns()
            validate_card(card, raw_size=raw_size)
            latencies.append((time.thread_time_ns() - start) / 1e6)
    finally:
        gc.enable()
    return sum(latencies) / 1000, latencies


def generated_cards(count: int, seed: int) -> list[tuple[Any, int]]:
    rng = random.Random(seed)
    cards = [make_card(rng, n) for n in range(count)]
    return [(card, len(json.dumps(card).encode())) for card in cards]


def describe_file(path: Path, card: Any, raw_size: int) -> str:
    report = validate_card(card, raw_size=raw_size)
    verdict = "valid" if report.valid else "invalid"
    return f"validate {path.name[:28]} ({raw_size} B, {report.flavor}, {verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cards", nargs="*", type=Path, help="Agent Card JSON files, a row each")
    parser.add_argument("--generated", type=int, default=500, help="generated v1.0 cards (0: none)")
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per row")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    table = Table()
    if args.generated:
        cards = generated_cards(args.generated, args.seed)
        sizes = sorted(size for _, size in cards)
        what = f"validate generated v1.0 cards ({sizes[0]}–{sizes[-1]} B)"
        table.add(what, args.calls, *time_calls(cards, args.calls))
    for path in args.cards:
        raw = path.read_bytes()
        card = json.loads(raw)
        table.add(describe_file(path, card, len(raw)), args.calls, *time_calls([(card, len(raw))], args.calls))
    table.print("python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
