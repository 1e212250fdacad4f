"""Group commit: concurrent submissions share transactions, and each caller gets its own outcome."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from registry.db.group_commit import GroupCommitter
from tests.support.waiting import wait_for


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


# -- announced submissions (`expecting`) and the serializing lock --------------------------------

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


def _run_announced(committer: GroupCommitter[int], items: list[int]) -> dict[int, BaseException | None]:
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


def test_announced_callers_are_written_together_without_waiting_out_the_linger():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=3.0)
    started = time.monotonic()
    outcomes = _run_announced(committer, list(range(8)))
    assert time.monotonic() - started < 1.5  # the leader went as soon as the last one arrived
    assert outcomes == {item: None for item in range(8)}
    assert [sorted(batch) for batch in recorder.batches] == [list(range(8))]  # one commit for eight


def test_announced_batches_respect_max_batch():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, max_batch=3, linger=3.0)
    outcomes = _run_announced(committer, list(range(7)))
    assert outcomes == {item: None for item in range(7)}
    assert sorted(recorder.written) == list(range(7))
    assert all(len(batch) <= 3 for batch in recorder.batches)
    assert len(recorder.batches) < 7


def test_one_bad_item_in_an_announced_batch_fails_only_its_caller():
    recorder = Recorder(bad=frozenset({13}))
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=3.0)
    outcomes = _run_announced(committer, [1, 2, 13, 4, 5])
    assert sorted(recorder.batches[0]) == [1, 2, 4, 5, 13]  # they were tried together first
    assert {item: str(error) for item, error in outcomes.items() if error is not None} == {13: "bad item 13"}
    assert sorted(recorder.written) == [1, 2, 4, 5]


def _leader_waiting(committer: GroupCommitter[int], pending: int) -> None:
    deadline = time.monotonic() + DEADLINE
    while not (committer._leader_active and len(committer._pending) == pending):
        assert time.monotonic() < deadline, "no leader started waiting"
        time.sleep(0.001)


def test_a_caller_that_announces_and_gives_up_releases_the_leader_at_once():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=30.0)
    give_up, gave_up = threading.Event(), threading.Event()
    announced = threading.Event()
    failures: list[BaseException] = []

    def doomed() -> None:  # e.g. a registration whose card fails validation
        try:
            with committer.expecting():
                announced.set()
                give_up.wait(DEADLINE)
                raise ValueError("invalid card")
        except ValueError as error:
            failures.append(error)
        gave_up.set()

    loser = threading.Thread(target=doomed)
    loser.start()
    announced.wait(DEADLINE)
    leader_done = threading.Event()

    def lead() -> None:
        with committer.expecting():
            committer.submit(1)
        leader_done.set()

    leader = threading.Thread(target=lead)
    leader.start()
    _leader_waiting(committer, pending=1)  # holding item 1 back for the announced caller
    give_up.set()
    gave_up.wait(DEADLINE)
    assert leader_done.wait(1.0), "the leader kept waiting for a caller that left"
    assert recorder.batches == [[1]]
    assert [str(error) for error in failures] == ["invalid card"]  # its error still reached it
    for thread in (loser, leader):
        thread.join(DEADLINE)


def test_the_leader_waits_at_most_the_linger_for_a_slow_announced_caller():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=0.05)
    slow_may_submit, slow_announced = threading.Event(), threading.Event()

    def slow() -> None:
        with committer.expecting():
            slow_announced.set()
            slow_may_submit.wait(DEADLINE)
            committer.submit(2)

    slow_caller = threading.Thread(target=slow)
    slow_caller.start()
    slow_announced.wait(DEADLINE)
    started = time.monotonic()
    with committer.expecting():
        committer.submit(1)  # the slow caller is still working: write without it after the linger
    assert time.monotonic() - started < 1.0
    assert recorder.batches == [[1]]
    slow_may_submit.set()
    slow_caller.join(DEADLINE)
    assert recorder.batches == [[1], [2]]


def test_leaving_expecting_after_submitting_does_not_count_the_caller_twice():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=30.0)
    with committer.expecting():
        committer.submit(1)
    # Were the first caller still counted as coming, this lone submit would wait out the 30 s linger.
    done = threading.Event()
    thread = threading.Thread(target=lambda: (committer.submit(2), done.set()))
    thread.start()
    assert done.wait(1.0)
    assert recorder.batches == [[1], [2]]
    thread.join(DEADLINE)


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
    first = threading.Thread(target=_run_announced, args=(committers[0], [*range(10), 13]))
    second = threading.Thread(target=_run_announced, args=(committers[1], [*range(100, 110), 113]))
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
