"""`heap.settle`: what a process built at start is out of the collector's sight afterwards."""

from __future__ import annotations

import gc

from registry import heap


def test_settle_freezes_what_survives_so_full_collections_walk_only_newer_objects():
    kept = [{"n": n} for n in range(10_000)]  # built at start and kept, as the app and services are
    try:
        heap.settle()
        assert gc.get_freeze_count() >= len(kept)
        oldest = gc.get_objects(generation=2)  # what a full collection walks now
        assert not any(obj is kept[0] for obj in oldest)
        assert len(oldest) < gc.get_freeze_count()
    finally:
        gc.unfreeze()
