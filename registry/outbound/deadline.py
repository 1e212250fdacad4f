"""A wall-clock deadline for a whole HTTP exchange.

Socket timeouts bound each read, not the exchange: a server trickling a byte a second never
trips a read timeout. One watchdog thread per client keeps a heap of deadlines and, when one
passes, shuts the socket the exchange is blocked on. The connection in use is announced through
a thread-local (``watching``) because urllib3 picks it from its pool inside ``urlopen``.
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# How late a deadline may fire, at most.
_GRANULARITY = 0.02


class Watch:
    """The deadline of one exchange and the socket it is currently reading from."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.fired = False  # set by the watchdog only
        self._done = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def attach(self, sock: socket.socket | None) -> None:
        """Watch ``sock`` from now on; shut it at once if the deadline already passed."""
        with self._lock:
            if self._done or sock is None:
                return
            self._sock = sock
            if self.fired:
                _shut(sock)

    def detach(self) -> bool:
        """Stop watching the socket (it is going back to the pool). True if it was shut."""
        with self._lock:
            self._sock = None
            return self.fired

    def finish(self) -> None:
        """The exchange is over; a later expiry must not touch anything."""
        with self._lock:
            self._done = True
            self._sock = None

    def fire(self) -> None:
        # Under the lock, so a socket detached and handed to another request is never shut.
        with self._lock:
            if self._done:
                return
            self.fired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    try:
        # The plain socket method: SSLSocket.shutdown() would also drop its SSL object under
        # the feet of the thread that is reading.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: nothing is blocked on it


class DeadlineWatchdog:
    """Fires ``Watch`` objects when their deadline passes. Thread-safe."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Watch]] = []
        self._sequence = itertools.count()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, seconds: float) -> Watch:
        """A new Watch expiring ``seconds`` from now. Raises RuntimeError after ``stop``."""
        watch = Watch(time.monotonic() + seconds)
        with self._cond:
            if self._stopped:
                raise RuntimeError("the HTTP client was closed")
            heapq.heappush(self._heap, (watch.deadline, next(self._sequence), watch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="outbound-deadline-watchdog", daemon=True)
                self._thread.start()
            if self._heap[0][2] is watch:
                self._cond.notify()
        return watch

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    heapq.heappop(self._heap)[2].fire()
                # Waking at most every _GRANULARITY batches expiries: most watches finished
                # long before their deadline, and a wake-up per request costs throughput.
                wait = max(self._heap[0][0] - now, _GRANULARITY) if self._heap else None
                self._cond.wait(wait)


_current = threading.local()


@contextmanager
def watching(watch: Watch) -> Iterator[Watch]:
    """Make ``watch`` the one that connections used by this thread attach to."""
    previous = getattr(_current, "watch", None)
    _current.watch = watch
    try:
        yield watch
    finally:
        _current.watch = previous


def current_watch() -> Watch | None:
    return getattr(_current, "watch", None)
