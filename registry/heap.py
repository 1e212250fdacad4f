"""Short full garbage collections in long-running processes.

A full (generation 2) collection walks every container object the process holds, and holds the
interpreter lock while it does. After start a web or worker process holds hundreds of thousands
of them (modules, the app, SQLAlchemy's metadata and compiled statements, the card schemas),
none of them garbage. In the relay worker under `bench/relay.py` a full collection took 130–170 ms
on this 2-core machine: every notification in flight waited that long, and those waits were the
whole of the relay's p99 on PostgreSQL. `settle()` collects once at the end of start-up and
freezes what survived (`gc.freeze`: a permanent generation the collector no longer walks), so
later full collections walk only what was made since.

It also makes collections rarer: a young-generation collection after every `YOUNG_THRESHOLD`
container allocations instead of Python's 700. Requests allocate thousands of short-lived objects
(a parsed card, its validation, its rows), nearly all freed by reference counting, and each
collection of the young generation walks them and moves survivors to an older one, which is then
walked in turn. Measured in one process importing 4,000 cards in batches of 1,000 (two rounds
each): collections took 0.10–0.15 ms a card with Python's thresholds, 0.025–0.04 ms with these.
Cyclic garbage waits a little longer for its collection.

A bulk request (`POST /v1/agents/import`) holds its whole batch while it works on it: ~60,000
containers for 1,000 cards, parsed, validated and turned into rows. Each collection walked them
again and moved them to an older generation, where the next walked them once more: in one
process importing 10,000 cards, collections took 0.37 s, 12% of the CPU. `collections_paused`
keeps the collector off for the length of such a request; its objects are freed by reference
counting when it ends, as before.
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
