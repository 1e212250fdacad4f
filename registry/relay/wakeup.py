"""Waking the delivery job when a notification is committed, so it is delivered in milliseconds.

The database stays the only source of truth: a wake-up only makes the job look now rather than
at its next tick, and a lost wake-up costs at most one tick. Three sources:

- the same process: the ingress calls `RelayWakeup.notify()` after its commit (`agentdex serve`);
- PostgreSQL: a trigger on `relay_messages` notifies in the inserting transaction (sent only on
  commit) and the worker `LISTEN`s on a connection of its own (`PgListener`);
- SQLite in another process: `PRAGMA data_version` changes when any other connection commits; the
  worker polls it, which reads shared memory only (`SqliteChangeWatcher`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Engine

log = logging.getLogger(__name__)
RECONNECT_DELAY = 1.0
QUIET_AFTER = 1.0
IDLE_FACTOR = 10


class RelayWakeup:
    """A flag a notifier sets and the delivery job waits on; a drain in progress may also listen
    (`registry.jobs.base.WorkNews`) to claim what is announced beside the deliveries in flight."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._listeners: tuple[Callable[[], None], ...] = ()
        self._lock = threading.Lock()

    def notify(self) -> None:
        self._event.set()
        for listener in self._listeners:
            listener()

    def wait(self, timeout: float) -> bool:
        """True when notified (the flag is then cleared: messages committed before are due)."""
        if not self._event.wait(timeout):
            return False
        self.take()
        return True

    def take(self) -> None:
        """Clear the flag: the caller is about to look at everything committed so far."""
        self._event.clear()

    @contextlib.contextmanager
    def listening(self, callback: Callable[[], None]) -> Iterator[None]:
        with self._lock:
            self._listeners += (callback,)
        try:
            yield
        finally:
            with self._lock:
                self._listeners = tuple(listener for listener in self._listeners if listener is not callback)


class ChangeWatcher:
    """A daemon thread that turns database changes into `RelayWakeup.notify()` calls."""

    def __init__(self, wakeup: RelayWakeup, name: str) -> None:
        self._wakeup = wakeup
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._watch()
            except Exception:  # a dropped connection: the job's tick still delivers meanwhile
                log.warning("relay change watcher lost its connection; reconnecting", exc_info=True)
                self._stop.wait(RECONNECT_DELAY)

    def _watch(self) -> None:
        raise NotImplementedError


class PgListener(ChangeWatcher):
    def __init__(self, wakeup: RelayWakeup, connect: Callable[[], Any], channel: str) -> None:
        super().__init__(wakeup, "agentdex-relay-listen")
        self._connect = connect
        self._channel = channel

    def _watch(self) -> None:
        with self._connect() as conn:
            conn.execute(f"LISTEN {self._channel}")
            while not self._stop.is_set():
                for _ in conn.notifies(timeout=1.0):
                    self._wakeup.notify()


class SqliteChangeWatcher(ChangeWatcher):
    """Polls every `poll` seconds while the database is changing, `IDLE_FACTOR` times slower after
    a quiet second: prompt under traffic, nearly free when idle."""

    def __init__(self, wakeup: RelayWakeup, engine: Engine, poll: float,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        super().__init__(wakeup, "agentdex-relay-watch")
        self._engine = engine
        self._poll = poll
        self._monotonic = monotonic

    def _watch(self) -> None:
        with self._engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            seen, changed_at = _data_version(raw), self._monotonic()
            while not self._stop.wait(self._interval(changed_at)):
                version = _data_version(raw)
                if version != seen:
                    seen, changed_at = version, self._monotonic()
                    self._wakeup.notify()

    def _interval(self, changed_at: float) -> float:
        quiet = self._monotonic() - changed_at > QUIET_AFTER
        return self._poll * IDLE_FACTOR if quiet else self._poll


def _data_version(raw: Any) -> int:
    return int(raw.execute("PRAGMA data_version").fetchone()[0])


def change_watcher(engine: Engine, wakeup: RelayWakeup, *, poll: float, channel: str) -> ChangeWatcher:
    """The watcher for this database: LISTEN on PostgreSQL, data_version polling on SQLite."""
    if engine.dialect.name == "postgresql":
        import psycopg

        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        return PgListener(wakeup, lambda: psycopg.connect(url, autocommit=True), channel)
    return SqliteChangeWatcher(wakeup, engine, poll)
