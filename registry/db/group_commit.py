"""Group commit: writes that arrive together are written in one transaction.

A commit costs far more than the rows it carries. The first caller to find no writer active
becomes the leader: it takes everything pending, writes it in one transaction and wakes the
others; callers arriving meanwhile form the next batch, led by the oldest of them. Nobody waits
for a timer, so a lone request pays nothing extra, and every caller returns only once its own
rows are committed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class _Pending(Generic[T]):
    """An item and its outcome. `done` is a lock taken at birth and released by the leader once
    the outcome is known, or to hand the waiter the lead (`lead`): a waiter is woken by one
    release, without an Event's condition."""

    __slots__ = ("item", "done", "error", "lead")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = threading.Lock()
        self.done.acquire()
        self.error: BaseException | None = None
        self.lead = False  # woken before its outcome is known: it is to write the next batch


class GroupCommitter(Generic[T]):
    """Runs `write_batch(items)` for items submitted concurrently; `write_one(item)` isolates a
    batch that failed, so each caller gets its own outcome (e.g. one duplicate URL)."""

    def __init__(
        self,
        write_batch: Callable[[list[T]], None],
        write_one: Callable[[T], None],
        max_batch: int = 64,
        serialize: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
        linger: float = 0.002,
    ) -> None:
        self._serialize = serialize  # e.g. the database's WriterLock, shared with other committers
        self._write_batch = write_batch
        self._write_one = write_one
        self._max_batch = max_batch
        self._linger = linger
        self._cond = threading.Condition()
        self._pending: list[_Pending[T]] = []
        self._leader_active = False
        self._coming = 0  # announced by `expecting()`, not submitted yet
        self._announced = threading.local()

    @contextlib.contextmanager
    def expecting(self) -> Iterator[None]:
        """Announce that this thread will `submit` an item soon (it may still fail before)."""
        with self._cond:
            self._coming += 1
        self._announced.flag = True
        try:
            yield
        finally:
            if getattr(self._announced, "flag", False):  # left without submitting
                self._announced.flag = False
                with self._cond:
                    self._arrived()

    def submit(self, item: T) -> None:
        """Write `item` (with whatever else is pending); raise what writing it raised."""
        mine = _Pending(item)
        with self._cond:
            if getattr(self._announced, "flag", False):
                self._announced.flag = False
                self._arrived()
            self._pending.append(mine)
            lead = not self._leader_active
            self._leader_active = True
        if lead:
            self._lead()
        mine.done.acquire()
        if mine.lead:  # handed the lead: the next batch starts with this item
            self._lead()
            mine.done.acquire()
        if mine.error is not None:
            raise mine.error

    def _arrived(self) -> None:
        self._coming -= 1
        if self._coming == 0 or len(self._pending) + 1 >= self._max_batch:
            self._cond.notify_all()

    def _lead(self) -> None:
        """Write one batch, which holds the leader's own item, then hand the lead to the oldest
        item still pending (its caller wakes to write the next batch) or give it up."""
        with self._cond:
            if self._coming and len(self._pending) < self._max_batch:
                self._cond.wait_for(lambda: not self._coming or len(self._pending) >= self._max_batch, self._linger)
        # The batch is taken once this writer's turn has come: what arrived while another writer
        # held the database joins it, instead of waiting for a turn of its own.
        batch: list[_Pending[T]] = []
        try:
            with self._serialize():
                with self._cond:  # only the leader takes items: there is still at least one
                    batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
                self._write_serialized(batch)
        except BaseException as error:  # e.g. the process is stopping: the outcome is unknown
            for pending in batch:
                pending.error = pending.error or error
            raise
        finally:  # woken once the database is free for the next writer (a wake-up is a system call)
            with self._cond:
                successor = self._pending[0] if self._pending else None
                if successor is None:
                    self._leader_active = False
                else:
                    successor.lead = True
            for pending in batch:
                pending.done.release()
            if successor is not None:
                successor.done.release()

    def _write_serialized(self, batch: list[_Pending[T]]) -> None:
        """Write the batch; each item's error, if any, is left on it."""
        try:
            self._write_batch([p.item for p in batch])
        except Exception as error:
            if len(batch) > 1:
                self._write_each(batch)  # the batch rolled back as a whole; find whose item failed
            else:
                batch[0].error = error

    def _write_each(self, batch: list[_Pending[T]]) -> None:
        for pending in batch:
            try:
                self._write_one(pending.item)
            except Exception as error:  # handed to the caller that submitted the item
                pending.error = error
