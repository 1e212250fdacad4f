"""The `relay-delivery` job: drains the outbox on every tick, and at once when woken.

A dispatcher thread drains as soon as a notification is committed; a delivery out longer than
`registry.jobs.base.STRAGGLER_AFTER` does not hold up the next claim (a hanging target delays the
others by half a second, not its timeout). Wake-ups only make the job look now rather than at its
next tick; they come from the ingress in this process, PostgreSQL's `NOTIFY` (a trigger on
`relay_messages`, sent on commit) or, on SQLite, `PRAGMA data_version` (another connection committed).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Engine

from registry.jobs import JobContext, JobReport, LeasedJob
from registry.relay.outbox import RelayOutbox

log = logging.getLogger(__name__)

RELAY_DELIVERY = "relay-delivery"
STOP_CHECK = 1.0
RECONNECT_DELAY = 1.0
QUIET_AFTER = 1.0  # SQLite: poll `IDLE_FACTOR` times slower after a second without changes
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
    """A daemon thread running `watch(stop)`, which calls `RelayWakeup.notify()` on database changes
    until `stop` is set; when its connection fails it is called again a second later."""

    def __init__(self, name: str, watch: Callable[[threading.Event], None]) -> None:
        self._watch = watch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._watch(self._stop)
            except Exception:  # a dropped connection: the job's tick still delivers meanwhile
                log.warning("relay change watcher lost its connection; reconnecting", exc_info=True)
                self._stop.wait(RECONNECT_DELAY)


def change_watcher(engine: Engine, wakeup: RelayWakeup, *, poll: float, channel: str) -> ChangeWatcher:
    """LISTEN on PostgreSQL; on SQLite, `data_version` polled every `poll` seconds while it changes."""
    if engine.dialect.name == "postgresql":
        import psycopg

        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

        def listen(stop: threading.Event) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"LISTEN {channel}")
                while not stop.is_set():
                    for _ in conn.notifies(timeout=1.0):
                        wakeup.notify()

        return ChangeWatcher("agentdex-relay-listen", listen)

    def watch(stop: threading.Event) -> None:
        with engine.connect() as conn:
            raw: Any = conn.connection.dbapi_connection
            seen, changed_at = _data_version(raw), time.monotonic()
            while not stop.wait(poll * IDLE_FACTOR if time.monotonic() - changed_at > QUIET_AFTER else poll):
                if (version := _data_version(raw)) != seen:
                    seen, changed_at = version, time.monotonic()
                    wakeup.notify()

    return ChangeWatcher("agentdex-relay-watch", watch)


def _data_version(raw: Any) -> int:
    return int(raw.execute("PRAGMA data_version").fetchone()[0])


class RelayDeliveryJob:
    def __init__(
        self,
        every: float,
        outbox: RelayOutbox,
        wakeup: RelayWakeup,
        *,
        batch: int,
        dispatcher: bool = True,
        watcher: Callable[[], ChangeWatcher | None] = lambda: None,
    ) -> None:
        self.name = RELAY_DELIVERY
        self.every = every
        self._leased = LeasedJob(RELAY_DELIVERY, every, outbox, batch=batch)
        self._wakeup = wakeup
        self._dispatcher = dispatcher
        self._watcher = watcher
        self._drain_lock = threading.Lock()
        self._dispatching: JobContext | None = None
        self._start_lock = threading.Lock()

    def run(self, ctx: JobContext) -> JobReport:
        if self._dispatcher:
            with self._start_lock:
                start, self._dispatching = self._dispatching is not ctx, ctx
            if start:
                threading.Thread(
                    target=self._dispatch, args=(ctx,), name="agentdex-relay-dispatch", daemon=True
                ).start()
        return self.drain(ctx)

    def drain(self, ctx: JobContext) -> JobReport:
        """Deliver until nothing more is due (one drain at a time in this process)."""
        with self._drain_lock:
            return self._leased.run(ctx, news=self._wakeup)

    def _dispatch(self, ctx: JobContext) -> None:
        watcher = self._watcher()
        if watcher is not None:
            watcher.start()
        try:
            while not ctx.stopping.is_set():
                # Waking at least every second lets a stopped worker's thread end promptly.
                if not self._wakeup.wait(timeout=min(self.every, STOP_CHECK)) or ctx.stopping.is_set():
                    continue
                try:
                    self.drain(ctx)
                except Exception as error:  # e.g. the database is away: the tick retries, the thread lives on
                    if not (isinstance(error, RuntimeError) and ctx.stopping.is_set()):  # the pool shut down
                        log.exception("relay delivery failed after a wake-up; the next tick retries")
        finally:
            if watcher is not None:
                watcher.stop()
