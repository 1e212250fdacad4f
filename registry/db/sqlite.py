"""SQLite's one writer: batched writers queue on a file lock, and a background thread checkpoints
the WAL so that committing requests do not copy pages and fsync."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import Engine

log = logging.getLogger(__name__)

# With a background checkpointer the committing connection only checkpoints as a backstop, when
# the WAL has grown past this many pages (~40 MB) because the checkpointer fell behind.
BACKSTOP_CHECKPOINT_PAGES = 10_000


def sqlite_path(engine: Engine) -> Path | None:
    """The database file of a file-backed SQLite engine, else None."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return None
    return Path(engine.url.database)


class WriterLock:
    """Serialises one database's batched writers across threads and processes (SQLite only).

    A thread lock for this process, then `flock` on `<database>-writer.lock` for the others.
    PostgreSQL takes row locks itself, so there the lock does nothing.
    """

    def __init__(self, path: Path | None) -> None:
        self._path = None if path is None else path.with_name(path.name + "-writer.lock")
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._pid = os.getpid()
        self._held = threading.local()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock; a thread that holds it already goes on (a batch writer's own writes)."""
        if self._path is None or getattr(self._held, "flag", False):
            yield
            return
        if self._pid != os.getpid():  # forked (e.g. a preloading server): the file and the thread
            self._fd, self._thread_lock, self._pid = None, threading.Lock(), os.getpid()  # lock are the parent's
        with self._thread_lock:
            fd = self._file()
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._held.flag = True
            try:
                yield
            finally:
                self._held.flag = False
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _file(self) -> int:
        assert self._path is not None
        if self._fd is None:
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            weakref.finalize(self, os.close, self._fd)  # an engine's lock goes with the engine
        return self._fd


_writer_locks: weakref.WeakKeyDictionary[Engine, WriterLock] = weakref.WeakKeyDictionary()
_writer_locks_guard = threading.Lock()


def writer_lock(engine: Engine) -> WriterLock:
    """The one WriterLock of this engine in this process (shared by its group committers)."""
    with _writer_locks_guard:
        lock = _writer_locks.get(engine)
        if lock is None:
            lock = _writer_locks[engine] = WriterLock(sqlite_path(engine))
        return lock


class WalCheckpointer:
    """Checkpoints a SQLite WAL from a background thread every `interval` seconds.

    PASSIVE checkpoints never block readers or writers; the committing requests no longer copy
    pages and fsync when the WAL crosses SQLite's 1,000-page default.
    """

    def __init__(self, path: Path, interval: float = 0.5) -> None:
        self._path = path
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpointer", daemon=True)

    def start(self) -> WalCheckpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def checkpoint(self, connection: sqlite3.Connection) -> None:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _run(self) -> None:
        connection = sqlite3.connect(self._path, timeout=1, check_same_thread=False)
        try:
            while not self._stop.wait(self._interval):
                try:
                    self.checkpoint(connection)
                except sqlite3.Error as error:  # busy or locked: the next round tries again
                    log.debug("WAL checkpoint skipped: %s", error)
        finally:
            connection.close()
