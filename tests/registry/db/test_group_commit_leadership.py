"""Group commit under a serializing lock: every batch written inside it, callers woken as soon as the
database is free, and the lead handed to the oldest caller still pending."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from registry.db.group_commit import GroupCommitter
from tests.registry.db.group_commit_support import DEADLINE, Recorder, run_announced
from tests.support.waiting import wait_for


class RecordingSerializer:
    """A serialize() lock for committers that records how many writers are inside at once."""

    def __init__(self, leave_after: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._leave_after = leave_after  # seconds a writer takes to leave after its write
        self.inside = 0
        self.entries = 0
        self.most_inside = 0

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._lock:
            self.inside += 1
            self.entries += 1
            self.most_inside = max(self.most_inside, self.inside)
            try:
                yield
            finally:
                time.sleep(self._leave_after)
                self.inside -= 1


def test_every_batch_and_every_retry_is_written_inside_serialize_shared_by_two_committers():
    serializer = RecordingSerializer()
    outside: list[list[int]] = []

    def guarded(write: Callable[[Any], None]) -> Callable[[Any], None]:
        def inner(arg: Any) -> None:
            if serializer.inside != 1:
                outside.append(arg)
            write(arg)

        return inner

    recorders = [Recorder(bad=frozenset({13})), Recorder(bad=frozenset({113}))]
    committers = [
        GroupCommitter(guarded(r.write_batch), guarded(r.write_one), serialize=serializer.hold, linger=3.0)
        for r in recorders
    ]
    first = threading.Thread(target=run_announced, args=(committers[0], [*range(10), 13]))
    second = threading.Thread(target=run_announced, args=(committers[1], [*range(100, 110), 113]))
    for thread in (first, second):
        thread.start()
    for thread in (first, second):
        thread.join(2 * DEADLINE)
    assert sorted(recorders[0].written) == list(range(10))
    assert sorted(recorders[1].written) == list(range(100, 110))
    assert outside == []
    assert serializer.most_inside == 1  # the two committers never wrote at the same time
    assert serializer.entries == sum(len(r.batches) for r in recorders)  # once per batch, retries included
    assert serializer.inside == 0


def test_items_that_arrive_while_another_writer_holds_serialize_join_the_waiting_batch():
    """The batch is taken when the writer's turn comes, not before it waits for the turn: two
    processes on one SQLite file take turns, and what came meanwhile rides along."""
    other_writer = threading.Lock()
    recorder = Recorder()
    committer: GroupCommitter[int] = GroupCommitter(
        recorder.write_batch, recorder.write_one, serialize=lambda: other_writer
    )
    other_writer.acquire()
    callers = [threading.Thread(target=committer.submit, args=(item,)) for item in (1, 2, 3)]
    try:
        callers[0].start()
        assert wait_for(lambda: committer._leader_active, DEADLINE), "the first caller never led"
        for caller in callers[1:]:
            caller.start()
        assert wait_for(lambda: {p.item for p in committer._pending} >= {2, 3}, DEADLINE), (
            "the later items never arrived"
        )
    finally:
        other_writer.release()
    for caller in callers:
        caller.join(DEADLINE)
    assert recorder.batches == [[1, 2, 3]]


def test_a_failed_write_releases_serialize():
    serializer = RecordingSerializer()

    def fail(items: list[str]) -> None:
        raise KeyError("dup")

    committer = GroupCommitter(fail, lambda item: None, serialize=serializer.hold)
    with pytest.raises(KeyError):
        committer.submit("a")
    assert (serializer.entries, serializer.inside) == (1, 0)
    committer2 = GroupCommitter(lambda items: None, lambda item: None, serialize=serializer.hold)
    committer2.submit("b")  # would block forever on a lock left held
    assert serializer.entries == 2


def test_callers_are_woken_once_the_database_is_free_for_the_next_writer():
    """Waking a caller is a system call; done inside serialize() it would keep the other
    process's writer waiting for it."""
    serializer = RecordingSerializer(leave_after=0.2)  # a woken caller would see the writer inside
    recorder = Recorder()
    gate = threading.Event()

    def write_batch(items: list[int]) -> None:
        if items == [1]:
            gate.wait(DEADLINE)  # the second caller queues behind the first batch
        recorder.write_batch(items)

    committer: GroupCommitter[int] = GroupCommitter(write_batch, recorder.write_one, serialize=serializer.hold)
    inside_when_woken: dict[int, int] = {}

    def submit(item: int) -> None:
        committer.submit(item)
        inside_when_woken[item] = serializer.inside

    first = threading.Thread(target=submit, args=(1,))
    first.start()
    assert wait_for(lambda: serializer.inside == 1, DEADLINE), "the first caller never led"
    second = threading.Thread(target=submit, args=(2,))
    second.start()
    assert wait_for(lambda: len(committer._pending) == 1, DEADLINE), "the second caller never queued"
    gate.set()
    for thread in (first, second):
        thread.join(DEADLINE)
    assert recorder.batches == [[1], [2]]
    assert inside_when_woken == {1: 0, 2: 0}


def test_each_batch_is_written_by_the_caller_of_its_oldest_item_and_nobody_waits_for_later_batches():
    """A leader that went on writing while callers kept coming answered its own caller only at the
    first lull; each caller now writes at most the batch that holds its own item."""
    writers: list[tuple[str, list[int]]] = []
    held = {1: threading.Event(), 2: threading.Event()}

    def write_batch(items: list[int]) -> None:
        writers.append((threading.current_thread().name, list(items)))
        if items[0] in held:
            held[items[0]].wait(DEADLINE)

    committer: GroupCommitter[int] = GroupCommitter(write_batch, lambda item: None)
    returned: list[int] = []

    def submit(item: int) -> None:
        committer.submit(item)
        returned.append(item)

    callers = {item: threading.Thread(target=submit, args=(item,), name=f"caller-{item}") for item in (1, 2, 3, 4)}
    callers[1].start()
    assert wait_for(lambda: len(writers) == 1, DEADLINE), "the first caller never led"
    callers[2].start()
    callers[3].start()
    assert wait_for(lambda: len(committer._pending) == 2, DEADLINE), "two callers never queued"
    held[1].set()
    assert wait_for(lambda: returned == [1], DEADLINE), "the first caller waited for the next batch"
    callers[4].start()
    assert wait_for(lambda: len(committer._pending) == 1, DEADLINE), "the fourth caller never queued"
    held[2].set()
    for caller in callers.values():
        caller.join(DEADLINE)
    assert writers == [("caller-1", [1]), ("caller-2", [2, 3]), ("caller-4", [4])]
    assert sorted(returned) == [1, 2, 3, 4] and not committer._leader_active


class Stopping(BaseException):
    """Like KeyboardInterrupt or SystemExit: not an error of one item."""


def test_a_write_cut_short_fails_its_whole_batch_and_the_next_caller_leads():
    other_writer = threading.Lock()

    def write_batch(items: list[int]) -> None:
        if 1 in items:
            raise Stopping()

    committer: GroupCommitter[int] = GroupCommitter(write_batch, lambda item: None, serialize=lambda: other_writer)
    outcomes: dict[int, BaseException | None] = {}

    def submit(item: int) -> None:
        try:
            committer.submit(item)
            outcomes[item] = None
        except BaseException as error:  # noqa: BLE001 - the outcome under test
            outcomes[item] = error

    callers = [threading.Thread(target=submit, args=(item,)) for item in (1, 2)]
    with other_writer:  # both items wait for the database and are written as one batch
        callers[0].start()
        assert wait_for(lambda: committer._leader_active, DEADLINE), "the first caller never led"
        callers[1].start()
        assert wait_for(lambda: len(committer._pending) == 2, DEADLINE), "the second caller never queued"
    for caller in callers:
        caller.join(DEADLINE)
    assert {item: type(error) for item, error in outcomes.items()} == {
        1: Stopping,
        2: Stopping,
    }  # neither told "written"
    assert not committer._leader_active
    committer.submit(3)  # would wait forever for a leader that is gone
