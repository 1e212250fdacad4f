"""The `relay-delivery` job: drains the outbox on every tick, and at once when woken.

A tick of the worker (`AGENTDEX_RELAY_TICK`) runs passes of a `LeasedJob` over `RelayOutbox`
until a pass delivers nothing. The first run in a worker also starts a dispatcher thread that
waits for wake-ups (`registry.relay.wakeup`) and drains as soon as a notification is committed.
A delivery still out after `registry.jobs.base.STRAGGLER_AFTER` (a target that takes its whole
timeout) no longer holds its pass, and while only such deliveries are out, a wake-up is claimed
at once: a target that hangs delays the others by half a second, not by its timeout. The
database's leases still decide who delivers what, so any number of workers may do this.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from registry.jobs import JobContext, JobReport, LeasedJob
from registry.relay.outbox import RelayOutbox
from registry.relay.wakeup import ChangeWatcher, RelayWakeup

log = logging.getLogger(__name__)

RELAY_DELIVERY = "relay-delivery"
STOP_CHECK = 1.0


class RelayDeliveryJob:
    def __init__(self, every: float, outbox: RelayOutbox, wakeup: RelayWakeup, *, batch: int,
                 dispatcher: bool = True, watcher: Callable[[], ChangeWatcher | None] | None = None) -> None:
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
            self._start_dispatcher(ctx)
        return self.drain(ctx)

    def drain(self, ctx: JobContext) -> JobReport:
        """Deliver until nothing more is due (one drain at a time in this process)."""
        with self._drain_lock:
            return self._leased.run(ctx, news=self._wakeup)

    def _start_dispatcher(self, ctx: JobContext) -> None:
        with self._start_lock:
            if self._dispatching is ctx:
                return
            self._dispatching = ctx
        threading.Thread(target=self._dispatch, args=(ctx,), name="agentdex-relay-dispatch", daemon=True).start()

    def _dispatch(self, ctx: JobContext) -> None:
        watcher = self._watcher() if self._watcher is not None else None
        if watcher is not None:
            watcher.start()
        try:
            while not ctx.stopping.is_set():
                # Waking at least every second lets a stopped worker's thread end promptly.
                if self._wakeup.wait(timeout=min(self.every, STOP_CHECK)) and not ctx.stopping.is_set():
                    self._drain_woken(ctx)
        finally:
            if watcher is not None:
                watcher.stop()

    def _drain_woken(self, ctx: JobContext) -> None:
        try:
            self.drain(ctx)
        except RuntimeError:  # the worker's pool was shut down: the worker is stopping
            if not ctx.stopping.is_set():
                log.exception("relay delivery failed after a wake-up; the next tick retries")
        except Exception:  # e.g. the database is away: the tick retries, the thread must live on
            log.exception("relay delivery failed after a wake-up; the next tick retries")
