"""Group commit: registrations that arrive together are written in one transaction.

A commit costs far more than the rows it carries, and concurrent registrations (several client
connections, or a web process with many threads) would otherwise queue for the single SQLite
writer one commit at a time. The first caller to find no writer active becomes the leader: it
takes everything pending, writes it in one transaction and wakes the others; callers that arrive
meanwhile form the next batch. Nobody waits for a timer, so a lone request pays nothing extra.
Every caller returns only after its own rows are committed, so a 201 still means durable.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclasses.dataclass
class _Pending(Generic[T]):
    item: T
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    error: BaseException | None = None


class GroupCommitter(Generic[T]):
    """Runs `write_batch(items)` for items submitted concurrently; `write_one(item)` isolates a
    batch that failed, so each caller gets its own outcome (e.g. one duplicate URL)."""

    def __init__(self, write_batch: Callable[[list[T]], None], write_one: Callable[[T], None], max_batch: int = 64) -> None:
        self._write_batch = write_batch
        self._write_one = write_one
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._pending: list[_Pending[T]] = []
        self._leader_active = False

    def submit(self, item: T) -> None:
        """Write `item` (with whatever else is pending); raise what writing it raised."""
        mine = _Pending(item)
        with self._lock:
            self._pending.append(mine)
            lead = not self._leader_active
            self._leader_active = True
        if lead:
            self._lead()
        mine.done.wait()
        if mine.error is not None:
            raise mine.error

    def _lead(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
                if not batch:
                    self._leader_active = False
                    return
            self._write(batch)

    def _write(self, batch: list[_Pending[T]]) -> None:
        try:
            self._write_batch([p.item for p in batch])
        except Exception as error:
            if len(batch) > 1:
                self._write_each(batch)  # the batch rolled back as a whole; find whose item failed
                return
            batch[0].error = error
        for pending in batch:
            pending.done.set()

    def _write_each(self, batch: list[_Pending[T]]) -> None:
        for pending in batch:
            try:
                self._write_one(pending.item)
            except Exception as error:  # handed to the caller that submitted the item
                pending.error = error
            pending.done.set()
