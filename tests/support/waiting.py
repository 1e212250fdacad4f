"""Waiting for something another thread or process does, where there is nothing to await."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], seconds: float = 10.0) -> bool:
    """True once `predicate()` holds; False if it still does not after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False
