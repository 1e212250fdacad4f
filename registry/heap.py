"""Short full garbage collections in long-running processes.

A full (generation 2) collection walks every container object the process holds, and holds the
interpreter lock while it does. After start a web or worker process holds hundreds of thousands
of them (modules, the app, SQLAlchemy's metadata and compiled statements, the card schemas),
none of them garbage. In the relay worker under `bench/relay.py` a full collection took 130–170 ms
on this 2-core machine: every notification in flight waited that long, and those waits were the
whole of the relay's p99 on PostgreSQL. `settle()` collects once at the end of start-up and
freezes what survived (`gc.freeze`: a permanent generation the collector no longer walks), so
later full collections walk only what was made since.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Call once the process has built everything it keeps (app, services, jobs)."""
    gc.collect()
    gc.freeze()
