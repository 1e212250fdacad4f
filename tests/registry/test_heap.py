"""`heap`: what a process built at start is out of the collector's sight afterwards, and bulk requests
run without collections."""

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


def test_collections_stay_paused_until_the_last_of_concurrent_pauses_ends():
    assert gc.isenabled()
    first, second = heap.collections_paused(), heap.collections_paused()
    first.__enter__()
    second.__enter__()
    assert not gc.isenabled()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the other request still holds its batch
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with heap.collections_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_import_request_runs_without_collections_and_leaves_the_collector_on(client, auth, monkeypatch):  # type: ignore[no-untyped-def]
    import contextlib

    from tests.support.cards import make_card

    def collections_of_an_import(start: int) -> int:
        collections: list[int] = []

        def note(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                collections.append(info["generation"])

        items = [
            {"card": make_card(f"Heap {n}", tags=["heap"]), "cardUrl": f"https://heap{n}.example.com/c.json"}
            for n in range(start, start + 300)
        ]
        thresholds = gc.get_threshold()
        gc.set_threshold(100)  # a collection every 100 allocations, while the collector is on
        gc.callbacks.append(note)
        try:
            response = client.post("/v1/agents/import", json={"items": items}, headers=auth)
        finally:
            gc.callbacks.remove(note)
            gc.set_threshold(*thresholds)
        assert response.status_code == 200 and response.get_json()["created"] == 300
        assert gc.isenabled()
        return len(collections)

    paused = collections_of_an_import(0)  # those left are the test client's, around the request
    monkeypatch.setattr(heap, "collections_paused", contextlib.nullcontext)
    assert paused * 10 < collections_of_an_import(300)
