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
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # allocations between collections of the young generation (Python: 700)


def settle() -> None:
    """Call once the process has built everything it keeps (app, services, jobs)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
