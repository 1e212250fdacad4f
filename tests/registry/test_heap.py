"""`heap.settle`: what a process built at start is out of the collector's sight afterwards."""

from __future__ import annotations

import gc

from registry import heap


def test_settle_freezes_what_survives_so_full_collections_walk_only_newer_objects():
    kept = [{"n": n} for n in range(10_000)]  # built at start and kept, as the app and services are
    thresholds = gc.get_threshold()
    try:
        heap.settle()
        assert gc.get_freeze_count() >= len(kept)
        oldest = gc.get_objects(generation=2)  # what a full collection walks now
        assert not any(obj is kept[0] for obj in oldest)
        assert len(oldest) < gc.get_freeze_count()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_after_settle_the_young_generation_is_collected_every_ten_thousand_allocations():
    thresholds = gc.get_threshold()
    try:
        heap.settle()
        assert gc.get_threshold() == (heap.YOUNG_THRESHOLD, *thresholds[1:])
        gc.collect()
        before = gc.get_stats()[0]["collections"]
        garbage = [[n] for n in range(heap.YOUNG_THRESHOLD // 2)]  # half the threshold in containers
        assert gc.get_stats()[0]["collections"] == before  # Python's 700 would have collected seven times
        del garbage
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
