"""Group commit: concurrent submissions share transactions, and each caller gets its own outcome;
announced callers (`expecting`) are waited for, within the linger."""

from __future__ import annotations

import threading
import time

import pytest

from registry.db.group_commit import GroupCommitter
from tests.registry.db.group_commit_support import DEADLINE, Recorder, run_announced


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


# -- announced submissions (`expecting`) --------------------------------------------------------


def test_announced_callers_are_written_together_without_waiting_out_the_linger():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=3.0)
    started = time.monotonic()
    outcomes = run_announced(committer, list(range(8)))
    assert time.monotonic() - started < 1.5  # the leader went as soon as the last one arrived
    assert outcomes == {item: None for item in range(8)}
    assert [sorted(batch) for batch in recorder.batches] == [list(range(8))]  # one commit for eight


def test_announced_batches_respect_max_batch():
    recorder = Recorder()
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, max_batch=3, linger=3.0)
    outcomes = run_announced(committer, list(range(7)))
    assert outcomes == {item: None for item in range(7)}
    assert sorted(recorder.written) == list(range(7))
    assert all(len(batch) <= 3 for batch in recorder.batches)
    assert len(recorder.batches) < 7


def test_one_bad_item_in_an_announced_batch_fails_only_its_caller():
    recorder = Recorder(bad=frozenset({13}))
    committer = GroupCommitter(recorder.write_batch, recorder.write_one, linger=3.0)
    outcomes = run_announced(committer, [1, 2, 13, 4, 5])
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
