"""Short garbage collections in long-running processes.

`settle()` collects once after start-up and freezes what survived (`gc.freeze`), so later full
collections, which hold the interpreter lock, walk only what was made since rather than the whole
app; young collections come every `YOUNG_THRESHOLD` allocations instead of 700, since requests
free nearly everything by reference counting. `collections_paused` keeps the collector off while a
bulk import holds its whole batch, which each collection would otherwise walk again.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 10_000  # allocations between collections of the young generation (Python: 700)


def settle() -> None:
    """Call once the process has built everything it keeps (app, services, jobs)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


_pause_lock = threading.Lock()
_pauses = 0  # requests inside `collections_paused`
_enabled_before = True  # whether the collector ran before the first of them


@contextlib.contextmanager
def collections_paused() -> Iterator[None]:
    """No cyclic collection until the outermost of the concurrent pauses ends."""
    global _pauses, _enabled_before
    with _pause_lock:
        if _pauses == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _enabled_before:
                gc.enable()
