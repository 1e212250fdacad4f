"""Measure what `validate_card` costs per card: `python -m registry.validation.benchmark CARD.json …`.

For each file: its size and the CPU time of one call (raw_size given, as the API does), from
batches of calls timed with the thread's CPU clock, so that other processes on a shared machine
inflate the figures less than wall-clock time would: the median and the best batch, and the
calls per second of one core at the median. Registration must afford ≥ 1,000 cards/s through
the HTTP API on 2 cores, so validation should stay well under 0.5 ms for a typical 2–8 KB card.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from registry.validation import validate_card


def time_card(card: Any, raw_size: int, batches: int, batch_size: int) -> list[float]:
    """CPU seconds per call of each batch, after a warm-up (schemas compile on first use)."""
    for _ in range(20):
        validate_card(card, raw_size=raw_size)
    per_call = []
    gc.disable()  # a collection inside one batch is noise, not validation cost
    try:
        for _ in range(batches):
            start = time.thread_time()
            for _ in range(batch_size):
                validate_card(card, raw_size=raw_size)
            per_call.append((time.thread_time() - start) / batch_size)
    finally:
        gc.enable()
    return per_call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cards", nargs="+", type=Path, help="Agent Card JSON files")
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=100)
    args = parser.parse_args(argv)
    print(f"{'card':24} {'bytes':>6} {'flavor':>8} {'valid':>5} {'median µs':>10} {'best µs':>8} {'calls/s':>8}")
    medians = []
    for path in args.cards:
        raw = path.read_bytes()
        card = json.loads(raw)
        report = validate_card(card, raw_size=len(raw))
        per_call = time_card(card, len(raw), args.batches, args.batch_size)
        median = statistics.median(per_call)
        medians.append(median)
        print(f"{path.name[:24]:24} {len(raw):6} {str(report.flavor):>8} {str(report.valid):>5} "
              f"{median * 1e6:10.1f} {min(per_call) * 1e6:8.1f} {1 / median:8.0f}")
    print(f"median over {len(medians)} cards: {statistics.median(medians) * 1e6:.1f} µs per card (CPU time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
