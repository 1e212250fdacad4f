"""Group commit: concurrent submissions share transactions, and each caller gets its own outcome."""

from __future__ import annotations

import threading

import pytest

from registry.services.group_commit import GroupCommitter


def test_concurrent_items_are_written_in_shared_batches_and_each_caller_sees_its_own_error():
    gate = threading.Event()
    batches: list[list[int]] = []

    def write_batch(items: list[int]) -> None:
        if not batches:
            gate.wait(5)  # hold the first leader so that the others queue up behind it
        if 13 in items:
            raise ValueError("bad item")
        batches.append(items)

    def write_one(item: int) -> None:
        if item == 13:
            raise ValueError("bad item 13")
        batches.append([item])

    committer = GroupCommitter(write_batch, write_one)
    errors: dict[int, str] = {}

    def submit(item: int) -> None:
        try:
            committer.submit(item)
        except ValueError as error:
            errors[item] = str(error)

    first = threading.Thread(target=submit, args=(0,))
    first.start()
    while not committer._leader_active:  # the leader is inside write_batch, holding the gate
        pass
    others = [threading.Thread(target=submit, args=(i,)) for i in (1, 2, 13, 4)]
    for thread in others:
        thread.start()
    while len(committer._pending) < 4:
        pass
    gate.set()
    for thread in [first, *others]:
        thread.join(5)
    written = sorted(item for batch in batches for item in batch)
    assert written == [0, 1, 2, 4]
    assert errors == {13: "bad item 13"}


def test_a_lone_item_is_written_at_once_and_its_error_raised():
    written: list[list[str]] = []
    committer = GroupCommitter(written.append, lambda item: None)
    committer.submit("a")
    assert written == [["a"]]

    def fail(items: list[str]) -> None:
        raise KeyError("dup")

    with pytest.raises(KeyError):
        GroupCommitter(fail, lambda item: None).submit("b")
