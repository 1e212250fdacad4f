"""What the group-commit tests share: a recording writer and announced callers."""

from __future__ import annotations

import threading

from registry.db.group_commit import GroupCommitter

DEADLINE = 5.0


class Recorder:
    """A write_batch/write_one pair that records what was written in which batch, and refuses
    items listed in `bad` (a batch holding one fails as a whole, like a rolled-back transaction)."""

    def __init__(self, bad: frozenset[int] = frozenset()) -> None:
        self.bad = bad
        self.batches: list[list[int]] = []  # every write_batch call, including failed ones
        self.written: list[int] = []

    def write_batch(self, items: list[int]) -> None:
        self.batches.append(list(items))
        refused = [item for item in items if item in self.bad]
        if refused:
            raise ValueError(f"bad item {refused[0]}")
        self.written.extend(items)

    def write_one(self, item: int) -> None:
        if item in self.bad:
            raise ValueError(f"bad item {item}")
        self.written.append(item)


def run_announced(committer: GroupCommitter[int], items: list[int]) -> dict[int, BaseException | None]:
    """One thread per item: announce, wait until every thread has announced (the work between
    announcing and submitting), then submit. Returns each item's outcome."""
    everyone_announced = threading.Barrier(len(items), timeout=DEADLINE)
    outcomes: dict[int, BaseException | None] = {}

    def caller(item: int) -> None:
        with committer.expecting():
            everyone_announced.wait()
            try:
                committer.submit(item)
                outcomes[item] = None
            except Exception as error:
                outcomes[item] = error

    threads = [threading.Thread(target=caller, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    assert not any(thread.is_alive() for thread in threads), "a caller never returned"
    return outcomes
